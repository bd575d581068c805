//! The event loop driven by events sent by hand (the real watcher is tested through the
//! binary, tests/it/watch.rs): which events count, batches, and the rescan path.

use super::*;
use crate::catalog::CatalogReader;
use notify::event::{CreateKind, Flag, ModifyKind, RemoveKind};
use notify::Event;
use std::sync::mpsc::Sender;

fn write(root: &Path, rel: &str, body: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, body).unwrap();
}

fn opts() -> WatchOptions {
    WatchOptions {
        index: IndexOptions {
            jobs: 1,
            ..Default::default()
        },
        // Long enough that a loaded machine (2 cores, builds beside the tests) does not
        // split the events a test sends at once into two batches.
        debounce: Duration::from_millis(250),
        max_wait: Duration::from_secs(2),
    }
}

fn paths(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = CatalogReader::open(dir)
        .unwrap()
        .load_files()
        .unwrap()
        .into_keys()
        .collect();
    v.sort();
    v
}

/// Run the loop over the events `send` queues, until `batches` batches have landed.
fn follow_for(
    ix: &mut Indexer,
    batches: usize,
    send: impl FnOnce(&Sender<notify::Result<Event>>),
) -> Vec<WatchBatch> {
    follow_with(ix, &opts(), batches, send)
}

/// [`follow_for`] with other options.
fn follow_with(
    ix: &mut Indexer,
    opts: &WatchOptions,
    batches: usize,
    send: impl FnOnce(&Sender<notify::Result<Event>>),
) -> Vec<WatchBatch> {
    let (tx, rx) = mpsc::channel();
    send(&tx);
    let stop = AtomicBool::new(false);
    let mut got = Vec::new();
    follow(ix, &rx, opts, &stop, &mut |b| {
        got.push(b.clone());
        if got.len() == batches {
            stop.store(true, Ordering::Relaxed);
        }
    })
    .unwrap();
    got
}

#[test]
fn events_name_the_paths_of_a_batch_and_reads_do_not() {
    let d = tempfile::tempdir().unwrap();
    let lake = d.path().join("lake");
    write(&lake, "a.csv", "x,y\n1,2\n");
    let mut ix = Indexer::open(&lake, &lake.join(".lakestar"), &opts().index).unwrap();
    ix.run(&NoProgress).unwrap();
    let root = ix.lake().to_path_buf();
    write(&lake, "new/b.csv", "x,y\n3,4\n");
    write(&lake, "c.csv", "x,y\n5,6\n"); // no event: stays unindexed
    std::fs::remove_file(lake.join("a.csv")).unwrap();
    // Settled: every path is due one debounce after its event, none waits on its mtime.
    std::thread::sleep(opts().debounce * 2);
    let batches = follow_for(&mut ix, 1, |tx| {
        let ev = |kind, p: PathBuf| tx.send(Ok(Event::new(kind).add_path(p))).unwrap();
        ev(
            EventKind::Access(AccessKind::Open(AccessMode::Any)),
            root.join("c.csv"),
        );
        ev(EventKind::Create(CreateKind::Folder), root.join("new"));
        ev(EventKind::Remove(RemoveKind::File), root.join("a.csv"));
        ev(
            EventKind::Modify(ModifyKind::Any),
            root.join(".lakestar/catalog.sqlite"),
        );
        ev(EventKind::Modify(ModifyKind::Any), root.clone());
    });
    let b = &batches[0];
    assert_eq!(b.kind, BatchKind::Events);
    assert_eq!(b.scope, [root.join("a.csv"), root.join("new")]);
    assert_eq!((b.report.added, b.report.deleted), (1, 1), "{:?}", b.report);
    assert!(b.latency.is_some());
    assert_eq!(paths(ix.index_dir()), ["new/b.csv"]);
}

#[cfg(unix)]
#[test]
fn events_below_links_out_of_the_lake_are_dropped_unless_allowed() {
    let d = tempfile::tempdir().unwrap();
    let (lake, out) = (d.path().join("lake"), d.path().join("out"));
    write(&lake, "data/x.csv", "x,y\n1,2\n");
    write(&out, "y.csv", "x,y\n3,4\n");
    std::os::unix::fs::symlink("data", lake.join("in")).unwrap();
    std::os::unix::fs::symlink("../out", lake.join("out")).unwrap();
    std::os::unix::fs::symlink("/etc", lake.join("etc")).unwrap();
    let mut o = opts();
    o.index.follow_links = true;
    let mut ix = Indexer::open(&lake, &d.path().join("idx"), &o.index).unwrap();
    let r = ix.run(&NoProgress).unwrap();
    let refused: Vec<&str> = r.problems.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(refused, ["etc", "out"], "{:?}", r.problems);
    assert_eq!(paths(ix.index_dir()), ["data/x.csv", "in/x.csv"]);
    let root = ix.lake().to_path_buf();
    write(&out, "new.csv", "x,y\n5,6\n");
    write(&lake, "data/new.csv", "x,y\n7,8\n");
    std::thread::sleep(o.debounce * 2);
    // What the OS watch, following every link, reports: the events through `out` and
    // `etc` never make a batch.
    let send = |tx: &Sender<notify::Result<Event>>| {
        for p in ["out/new.csv", "etc/passwd", "in/new.csv", "data/new.csv"] {
            let ev = Event::new(EventKind::Create(CreateKind::File)).add_path(root.join(p));
            tx.send(Ok(ev)).unwrap();
        }
    };
    let batches = follow_with(&mut ix, &o, 1, send);
    let mut scope = batches[0].scope.clone();
    scope.sort();
    assert_eq!(scope, [root.join("data/new.csv"), root.join("in/new.csv")]);
    assert_eq!(batches[0].report.errors, 0, "{:?}", batches[0].report);
    assert_eq!(
        paths(ix.index_dir()),
        ["data/new.csv", "data/x.csv", "in/new.csv", "in/x.csv"]
    );
    drop(ix);

    // Allowed out, the same event is indexed.
    o.index.follow_outside = true;
    let mut ix = Indexer::open(&lake, &d.path().join("idx"), &o.index).unwrap();
    let send = |tx: &Sender<notify::Result<Event>>| {
        let ev = Event::new(EventKind::Create(CreateKind::File)).add_path(root.join("out/new.csv"));
        tx.send(Ok(ev)).unwrap();
    };
    let batches = follow_with(&mut ix, &o, 1, send);
    assert_eq!(batches[0].scope, [root.join("out/new.csv")]);
    assert!(paths(ix.index_dir()).contains(&"out/new.csv".to_string()));
}

#[test]
fn a_lost_event_queue_rescans_the_whole_lake() {
    let d = tempfile::tempdir().unwrap();
    let lake = d.path().join("lake");
    write(&lake, "a.csv", "x,y\n1,2\n");
    let mut ix = Indexer::open(&lake, &d.path().join("idx"), &opts().index).unwrap();
    ix.run(&NoProgress).unwrap();
    let root = ix.lake().to_path_buf();
    // Changes whose events were lost in the overflow.
    write(&lake, "lost/b.csv", "x,y\n3,4\n");
    std::fs::remove_file(lake.join("a.csv")).unwrap();
    let batches = follow_for(&mut ix, 1, |tx| {
        tx.send(Ok(
            Event::new(EventKind::Create(CreateKind::File)).add_path(root.join("lost/b.csv"))
        ))
        .unwrap();
        tx.send(Ok(Event::new(EventKind::Other).set_flag(Flag::Rescan)))
            .unwrap();
    });
    let b = &batches[0];
    assert_eq!(b.kind, BatchKind::Rescan);
    assert_eq!((b.report.added, b.report.deleted), (1, 1), "{:?}", b.report);
    assert_eq!(b.report.errors, 1);
    assert!(b.report.problems[0].1.contains("overflowed"));
    assert_eq!(paths(ix.index_dir()), ["lost/b.csv"]);

    // A watcher error rescans too, and says what it was.
    let batches = follow_for(&mut ix, 1, |tx| {
        tx.send(Err(notify::Error::generic("inotify died")))
            .unwrap();
    });
    assert_eq!(batches[0].kind, BatchKind::Rescan);
    assert!(batches[0].report.problems[0].1.contains("inotify died"));
}

#[test]
fn a_closed_event_channel_ends_the_watch_with_an_error() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join("lake")).unwrap();
    let mut ix =
        Indexer::open(&d.path().join("lake"), &d.path().join("idx"), &opts().index).unwrap();
    let (tx, rx) = mpsc::channel::<notify::Result<Event>>();
    drop(tx);
    let err = follow(&mut ix, &rx, &opts(), &AtomicBool::new(false), &mut |_| {}).unwrap_err();
    assert!(err.to_string().contains("watcher stopped"), "{err}");
}

#[test]
fn watch_reconciles_then_follows_real_events_until_stopped() {
    let d = tempfile::tempdir().unwrap();
    let lake = d.path().join("lake");
    write(&lake, "before.csv", "x,y\n1,2\n");
    let stop = AtomicBool::new(false);
    let mut kinds = Vec::new();
    std::thread::scope(|s| {
        let lake = &lake;
        let stop = &stop;
        let writer = s.spawn(move || {
            // Written once the reconciling run is under way or over: the OS watch is on.
            std::thread::sleep(Duration::from_millis(500));
            write(lake, "after/later.csv", "x,y\n3,4\n");
            // A watch that never sees it must not hang the test.
            let deadline = Instant::now() + Duration::from_secs(60);
            while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(50));
            }
            stop.store(true, Ordering::Relaxed);
        });
        watch(lake, &lake.join(".lakestar"), &opts(), stop, &mut |b| {
            kinds.push(b.kind);
            let seen = paths(&lake.join(".lakestar"));
            if seen.contains(&"after/later.csv".to_string()) {
                stop.store(true, Ordering::Relaxed);
            }
        })
        .unwrap();
        writer.join().unwrap();
    });
    assert_eq!(kinds[0], BatchKind::Reconcile);
    assert_eq!(
        paths(&lake.join(".lakestar")),
        ["after/later.csv", "before.csv"]
    );
}
