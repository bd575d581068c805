//! A headless Chromium under chromedriver, driven with fantoccini: installed when missing
//! (as root with apt-get), started with a fresh profile, stopped when dropped.

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
/// A hang guard for anything the browser waits for, not a measurement.
const WAIT: Duration = Duration::from_secs(60);

/// Install Chromium and chromedriver when they are missing and this is root with
/// apt-get; else fail saying what to install. Once per test binary.
fn ensure_chromium() {
    static CHECKED: Mutex<bool> = Mutex::new(false);
    let mut checked = CHECKED.lock().unwrap_or_else(|p| p.into_inner());
    if *checked {
        return;
    }
    let present = || Path::new(CHROMIUM).exists() && Path::new(CHROMEDRIVER).exists();
    if !present() {
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        let apt = Path::new("/usr/bin/apt-get").exists();
        assert!(
            root && apt,
            "the web UI tests need Chromium and chromedriver: install the Debian packages \
             `chromium` and `chromium-driver` (apt-get install chromium chromium-driver)"
        );
        eprintln!("web UI tests: installing chromium and chromium-driver with apt-get");
        let apt_get = |args: &[&str]| {
            Command::new("apt-get")
                .args(args)
                .env("DEBIAN_FRONTEND", "noninteractive")
                .output()
                .unwrap()
        };
        let install = [
            "install",
            "-y",
            "-q",
            "--no-install-recommends",
            "chromium",
            "chromium-driver",
        ];
        let mut out = apt_get(&install);
        if !out.status.success() {
            // A fresh machine may have no package lists yet.
            apt_get(&["update", "-q"]);
            out = apt_get(&install);
        }
        assert!(
            out.status.success() && present(),
            "apt-get install chromium chromium-driver failed:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    *checked = true;
}

/// A headless Chromium under chromedriver, with a fresh profile; both end when dropped.
pub struct Browser {
    pub rt: tokio::runtime::Runtime,
    client: Option<Client>,
    driver: Child,
    _profile: tempfile::TempDir,
}

impl Browser {
    pub fn start() -> Browser {
        ensure_chromium();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let driver = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let profile = tempfile::tempdir().unwrap();
        let args = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--hide-scrollbars",
            "--window-size=1280,1000",
            &format!("--user-data-dir={}", profile.path().display()),
        ];
        let caps = json!({"goog:chromeOptions": {"binary": CHROMIUM, "args": args}});
        let caps = caps.as_object().unwrap().clone();
        let url = format!("http://127.0.0.1:{port}");
        let start = Instant::now();
        let client = rt.block_on(async {
            loop {
                let connector = hyper_util::client::legacy::connect::HttpConnector::new();
                match ClientBuilder::new(connector)
                    .capabilities(caps.clone())
                    .connect(&url)
                    .await
                {
                    Ok(c) => break c,
                    // chromedriver is still starting.
                    Err(e) if start.elapsed() < WAIT => {
                        let _ = e;
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                    Err(e) => panic!("no WebDriver session: {e}"),
                }
            }
        });
        Browser {
            rt,
            client: Some(client),
            driver,
            _profile: profile,
        }
    }

    pub fn client(&self) -> &Client {
        self.client.as_ref().unwrap()
    }

    pub fn goto(&self, url: &str) {
        self.rt.block_on(self.client().goto(url)).unwrap();
    }

    pub fn url(&self) -> String {
        self.rt
            .block_on(self.client().current_url())
            .unwrap()
            .to_string()
    }

    /// The first element matching `css`, waited for.
    pub fn wait(&self, css: &str) -> fantoccini::elements::Element {
        self.rt
            .block_on(
                self.client()
                    .wait()
                    .at_most(WAIT)
                    .for_element(Locator::Css(css)),
            )
            .unwrap_or_else(|e| panic!("no {css} in the page: {e}\n{}", self.body_text()))
    }

    pub fn text(&self, css: &str) -> String {
        let e = self.wait(css);
        self.rt.block_on(e.text()).unwrap()
    }

    pub fn all(&self, css: &str) -> Vec<fantoccini::elements::Element> {
        self.rt
            .block_on(self.client().find_all(Locator::Css(css)))
            .unwrap()
    }

    pub fn texts(&self, css: &str) -> Vec<String> {
        self.all(css)
            .iter()
            .map(|e| self.rt.block_on(e.text()).unwrap())
            .collect()
    }

    pub fn attr(&self, e: &fantoccini::elements::Element, name: &str) -> Option<String> {
        self.rt.block_on(e.attr(name)).unwrap()
    }

    pub fn js(&self, script: &str) -> Value {
        self.rt
            .block_on(self.client().execute(script, vec![]))
            .unwrap()
    }

    pub fn body_text(&self) -> String {
        self.rt
            .block_on(
                self.client()
                    .execute("return document.body.innerText", vec![]),
            )
            .map(|v| v.as_str().unwrap_or("").to_string())
            .unwrap_or_default()
    }

    /// Wait until `script` returns true (a hang guard of [`WAIT`]).
    pub fn until(&self, script: &str) {
        let start = Instant::now();
        while self.js(script) != Value::Bool(true) {
            assert!(
                start.elapsed() < WAIT,
                "never true: {script}\n{}",
                self.body_text()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// With `LAKESTAR_UI_SCREENSHOTS=DIR`: the whole page as `DIR/ui-NAME.png`.
    pub fn screenshot(&self, name: &str) {
        let Some(dir) = std::env::var_os("LAKESTAR_UI_SCREENSHOTS") else {
            return;
        };
        let height = self
            .js("return document.documentElement.scrollHeight")
            .as_u64()
            .unwrap_or(1000)
            .clamp(600, 4000);
        self.rt
            .block_on(self.client().set_window_size(1280, height as u32 + 90))
            .unwrap();
        std::thread::sleep(Duration::from_millis(300));
        let png = self.rt.block_on(self.client().screenshot()).unwrap();
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(PathBuf::from(dir).join(format!("ui-{name}.png")), png).unwrap();
        self.rt
            .block_on(self.client().set_window_size(1280, 1000))
            .unwrap();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if let Some(c) = self.client.take() {
            let _ = self.rt.block_on(c.close());
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}
