//! Deterministic repairs of generated scripts, for mistakes small models make often and
//! that have exactly one reading, applied before a script runs and noted in the trace.
//! Measured on the local 1.5B model: a script that uses `pd.` without importing pandas,
//! or that copies a description's `load:` line verbatim (`load: pd.read_csv(…)`, which
//! Python takes as an annotation and never assigns) and then reads `df`, fails with a
//! NameError the same model's debugger hands back unchanged, round after round; and
//! `pd.np`, gone since pandas 2.0, fails every script that uses it.
//!
//! Written by hand: no crate rewrites Python source; the rules are line-level and only
//! fire when the script cannot run as written. None changes what a script computes: a
//! statistic stays the one the script asks for, over the rows it asks for. Each fix is
//! one named rule ([`super::rules`], family `repair`), switched off by `--rules`.

mod cells;
mod names;

use super::context::FileContext;
use super::rules::{Rule, RuleSet};
use names::{loose_names, padded_names, py_literal};
use regex::Regex;
use std::sync::OnceLock;

/// Module aliases a script may use without importing, and the import that binds each.
const ALIASES: &[(&str, &str)] = &[
    ("pd", "import pandas as pd"),
    ("np", "import numpy as np"),
    ("stats", "from scipy import stats"),
];

/// Functions and classes a script may call by their bare name without importing them,
/// by the module that has them: the statistics tests and models DABench-like questions
/// ask for. Only names with one usual home are listed (`mode`, `sqrt`, `log` are not).
const FUNCTIONS: &[(&str, &[&str])] = &[
    (
        "scipy.stats",
        &[
            "shapiro",
            "normaltest",
            "kstest",
            "anderson",
            "skew",
            "kurtosis",
            "pearsonr",
            "spearmanr",
            "kendalltau",
            "pointbiserialr",
            "ttest_ind",
            "ttest_rel",
            "ttest_1samp",
            "mannwhitneyu",
            "wilcoxon",
            "kruskal",
            "f_oneway",
            "chi2_contingency",
            "chisquare",
            "fisher_exact",
            "levene",
            "bartlett",
            "zscore",
            "iqr",
            "linregress",
            "boxcox",
            "sem",
        ],
    ),
    (
        "sklearn.linear_model",
        &["LinearRegression", "LogisticRegression", "Ridge", "Lasso"],
    ),
    (
        "sklearn.model_selection",
        &["train_test_split", "cross_val_score", "KFold"],
    ),
    (
        "sklearn.preprocessing",
        &[
            "StandardScaler",
            "MinMaxScaler",
            "LabelEncoder",
            "OneHotEncoder",
            "PolynomialFeatures",
        ],
    ),
    (
        "sklearn.metrics",
        &[
            "mean_squared_error",
            "mean_absolute_error",
            "r2_score",
            "accuracy_score",
            "f1_score",
            "precision_score",
            "recall_score",
            "confusion_matrix",
            "roc_auc_score",
        ],
    ),
    ("sklearn.cluster", &["KMeans", "DBSCAN"]),
    ("sklearn.decomposition", &["PCA"]),
    (
        "sklearn.ensemble",
        &[
            "RandomForestClassifier",
            "RandomForestRegressor",
            "GradientBoostingClassifier",
            "GradientBoostingRegressor",
        ],
    ),
    (
        "sklearn.tree",
        &["DecisionTreeClassifier", "DecisionTreeRegressor"],
    ),
    (
        "sklearn.neighbors",
        &["KNeighborsClassifier", "KNeighborsRegressor"],
    ),
    ("sklearn.impute", &["SimpleImputer"]),
];

/// The module of a function or class in [`FUNCTIONS`] (`shapiro` → `scipy.stats`).
pub(crate) fn home_of(name: &str) -> Option<&'static str> {
    FUNCTIONS
        .iter()
        .find(|(_, names)| names.contains(&name))
        .map(|(module, _)| *module)
}

/// A script after repair, with one line per fix made (empty: the script is unchanged).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repaired {
    /// The script to run.
    pub code: String,
    /// What was changed, in words.
    pub fixes: Vec<String>,
    /// The rule of each fix, in the same order.
    pub rules: Vec<Rule>,
}

impl Repaired {
    fn fix(&mut self, rule: Rule, what: String) {
        self.fixes.push(what);
        self.rules.push(rule);
    }
}

/// The `load:` call of each file whose description gives exactly one, by absolute path
/// (`("/lake/a.csv", "pd.read_csv(\"/lake/a.csv\", thousands=\",\")")`): what
/// [`repair_with`] puts in place of a bare read of that path.
pub fn load_calls(files: &[FileContext]) -> Vec<(String, String)> {
    files
        .iter()
        .filter_map(|f| {
            let path = f.path.to_string_lossy().to_string();
            let loads: Vec<&str> = f
                .description
                .lines()
                .filter_map(|l| l.trim_start().strip_prefix("load: "))
                .collect();
            match loads.as_slice() {
                [call] if call.starts_with("pd.read_csv(") && call.contains(&path) => {
                    Some((path, call.trim().to_string()))
                }
                _ => None,
            }
        })
        .collect()
}

/// Repair `code` (see the module doc); a script that needs nothing is returned as is.
pub fn repair(code: &str) -> Repaired {
    repair_with(code, &[], &[], RuleSet::all())
}

/// [`repair`], and a bare `pd.read_csv("path")` of a file in `loads` ([`load_calls`])
/// replaced by the call its description gives: the options that make it load as
/// described (`skiprows` of a report's preamble, `thousands`, `parse_dates`) are what
/// small models leave out, and then `.dt` fails or numbers stay text. A column of
/// `columns` whose name is padded with spaces (`"num. calls abandoned "`, common in
/// exported reports) is put in place of the same name written without them
/// ([`padded_names`]). Only the rules of `rules` apply, each fix tagged with its rule.
pub fn repair_with(
    code: &str,
    loads: &[(String, String)],
    columns: &[String],
    rules: RuleSet,
) -> Repaired {
    let mut r = Repaired {
        code: String::new(),
        fixes: Vec::new(),
        rules: Vec::new(),
    };
    let mut code = code.to_string();
    let padded = if rules.on(Rule::PaddedNames) {
        padded_names(columns)
    } else {
        Vec::new()
    };
    for (bare, exact) in padded {
        let mut changed = false;
        for q in ['"', '\''] {
            let written = format!("{q}{bare}{q}");
            if code.contains(&written) {
                if let Some(literal) = py_literal(&exact, q) {
                    code = code.replace(&written, &literal);
                    changed = true;
                }
            }
        }
        if changed {
            r.fix(
                Rule::PaddedNames,
                format!("the column {exact:?} was written without its spaces ({bare:?})"),
            );
        }
    }
    if rules.on(Rule::ColumnSpelling) {
        let (loose_code, loose_fixes) = loose_names(&code, columns);
        code = loose_code;
        for f in loose_fixes {
            r.fix(Rule::ColumnSpelling, f);
        }
    }
    // `'load:/lake/a.json'`: the description's `load:` label taken into the path, as small
    // models copy it; no path starts so, and the file exists without it.
    static LABELLED: OnceLock<Regex> = OnceLock::new();
    let labelled = LABELLED
        .get_or_init(|| Regex::new(r#"(r?["'])load:\s*(/[^"'\n]*)(["'])"#).expect("static regex"));
    if rules.on(Rule::LoadLabel) && labelled.is_match(&code) {
        code = labelled.replace_all(&code, "$1$2$3").into_owned();
        r.fix(
            Rule::LoadLabel,
            "the `load:` label taken into a path string is removed".to_string(),
        );
    }
    let loads = if rules.on(Rule::DescribedLoad) {
        loads
    } else {
        &[]
    };
    for (path, call) in loads {
        let bare = Regex::new(&format!(
            r#"pd\.read_csv\(\s*r?(?:"{p}"|'{p}')\s*\)"#,
            p = regex::escape(path)
        ))
        .expect("a valid pattern");
        if bare.is_match(&code) && !bare.is_match(call) {
            code = bare.replace_all(&code, regex::NoExpand(call)).into_owned();
            r.fix(
                Rule::DescribedLoad,
                format!("the bare read of {path} now uses its description's call (`{call}`)"),
            );
        }
    }
    if let Some((fixed, line)) = bind_load_line(&code).filter(|_| rules.on(Rule::LoadLine)) {
        r.fix(Rule::LoadLine, format!(
            "the description's `load:` line was copied as is; it now assigns the table the script reads (`{line}`)"
        ));
        code = fixed;
    }
    if let Some(fixed) = cells::matrix_cells(&code).filter(|_| rules.on(Rule::MatrixCell)) {
        code = fixed;
        r.fix(
            Rule::MatrixCell,
            "a cell of a `.corr()` or `.cov()` matrix is read with `.loc[row, column]`".to_string(),
        );
    }
    if rules.on(Rule::PandasNp) && code.contains("pd.np.") {
        // `pandas.np` was removed in pandas 2.0; small models still write it.
        r.fix(
            Rule::PandasNp,
            "`pd.np.` (removed in pandas 2) is now `np.`".to_string(),
        );
        code = code.replace("pd.np.", "np.");
    }
    if !rules.on(Rule::MissingImports) {
        r.code = code;
        return r;
    }
    let missing: Vec<&str> = ALIASES
        .iter()
        .filter(|(alias, _)| uses(&code, alias) && !binds(&code, alias))
        .map(|(_, import)| *import)
        .collect();
    let mut imports: Vec<String> = missing.iter().map(|s| s.to_string()).collect();
    for (module, names) in FUNCTIONS {
        let called: Vec<&str> = names
            .iter()
            .copied()
            .filter(|n| calls(&code, n) && !defines(&code, n))
            .collect();
        if !called.is_empty() {
            imports.push(format!("from {module} import {}", called.join(", ")));
        }
    }
    if !imports.is_empty() {
        r.fix(
            Rule::MissingImports,
            format!("added the missing `{}`", imports.join("`, `")),
        );
        let refs: Vec<&str> = imports.iter().map(String::as_str).collect();
        code = insert_imports(&code, &refs);
    }
    r.code = code;
    r
}

/// Whether `alias.` is used as a module outside comments (`x.pd.` and `spd.` do not count).
fn uses(code: &str, alias: &str) -> bool {
    outside_comments(code, &format!(r"(?:^|[^\w.]){alias}\.\w"))
}

/// Whether `name(` is called by its bare name outside comments (`stats.shapiro(` and
/// `my_shapiro(` do not count).
fn calls(code: &str, name: &str) -> bool {
    outside_comments(code, &format!(r"(?:^|[^\w.]){name}\s*\("))
}

/// Whether `pattern` matches a line of `code` with its `#` comment cut off.
fn outside_comments(code: &str, pattern: &str) -> bool {
    let re = Regex::new(pattern).expect("a valid pattern");
    code.lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .any(|l| re.is_match(l))
}

/// Whether the script imports or defines `name` (an assignment is not enough: small
/// models write `kurtosis = kurtosis(x)`, which calls the unimported function first;
/// the import is harmless where an assignment does bind it before the call).
fn defines(code: &str, name: &str) -> bool {
    let pattern = format!(
        r"(?m)\bas\s+{name}\b|^\s*import\s+{name}\b|^\s*from\s+\S+\s+import\s+(?:\([^)]*|.*)\b{name}\b|\bdef\s+{name}\b|\bclass\s+{name}\b|^\s*from\s+\S+\s+import\s+\*"
    );
    Regex::new(&pattern)
        .expect("a valid pattern")
        .is_match(code)
}

/// Whether the script binds `alias` anywhere: an import, `as alias`, an assignment, a
/// parameter or loop variable of that name.
fn binds(code: &str, alias: &str) -> bool {
    let pattern = format!(
        r"(?m)\bas\s+{alias}\b|^\s*import\s+{alias}\b|^\s*from\s+\S+\s+import\s+.*\b{alias}\b|^\s*{alias}\s*(?::[^=]*)?=[^=]|\bfor\s+{alias}\b|\bdef\s+\w+\([^)]*\b{alias}\b"
    );
    Regex::new(&pattern)
        .expect("a valid pattern")
        .is_match(code)
}

/// Put `imports` at the top, after a `from __future__` import (which must come first).
fn insert_imports(code: &str, imports: &[&str]) -> String {
    let lines: Vec<&str> = code.lines().collect();
    let at = lines
        .iter()
        .rposition(|l| l.trim_start().starts_with("from __future__"))
        .map_or(0, |i| i + 1);
    let mut out: Vec<&str> = lines[..at].to_vec();
    out.extend(imports);
    out.extend(&lines[at..]);
    let mut s = out.join("\n");
    if code.ends_with('\n') {
        s.push('\n');
    }
    s
}

/// `load: pd.read_csv(…)` copied from a description: Python reads it as an annotation
/// and binds nothing, so the table the script then reads by another name (`df`, `load`,
/// the file's stem: the local model wrote each) is never assigned. The one line becomes
/// an assignment of every name the script reads after it as a table (`df` anywhere,
/// any name subscripted or with an attribute) and binds nowhere, in the order read:
/// `df = load = pd.read_csv(…)`. Returns the script and the new line; `None` when there
/// is no such line, several, or no such name.
fn bind_load_line(code: &str) -> Option<(String, String)> {
    static LOAD: OnceLock<Regex> = OnceLock::new();
    static READ: OnceLock<Regex> = OnceLock::new();
    static STRING: OnceLock<Regex> = OnceLock::new();
    let load = LOAD.get_or_init(|| {
        Regex::new(r"^(\s*)load\s*:\s*(\w[\w.]*\s*\(.*)$").expect("a valid pattern")
    });
    let read = READ.get_or_init(|| {
        Regex::new(r"(?:^|[^\w.])(df\b|[A-Za-z_]\w*\s*[\[.])").expect("a valid pattern")
    });
    let string =
        STRING.get_or_init(|| Regex::new(r#""[^"\n]*"|'[^'\n]*'"#).expect("a valid pattern"));
    let lines: Vec<&str> = code.lines().collect();
    let found: Vec<usize> = (0..lines.len())
        .filter(|&i| load.is_match(lines[i]))
        .collect();
    let [i] = found.as_slice() else {
        return None;
    };
    // Bindings are looked for without the load line: its call's keyword arguments
    // (`sep=";"`) would read as an assignment of `load`.
    let others: String = lines
        .iter()
        .enumerate()
        .filter(|(j, _)| j != i)
        .map(|(_, l)| *l)
        .collect::<Vec<_>>()
        .join("\n");
    let mut names: Vec<String> = Vec::new();
    for l in &lines[i + 1..] {
        let l = l.split('#').next().unwrap_or("");
        let l = string.replace_all(l, "\"\"");
        for c in read.captures_iter(&l) {
            let n = c[1].trim_end_matches(['[', '.', ' ', '\t']).to_string();
            let known = ALIASES.iter().any(|(a, _)| *a == n) || MODULES.contains(&n.as_str());
            if !known && !names.contains(&n) && !binds(&others, &n) && !defines(&others, &n) {
                names.push(n);
            }
        }
    }
    if names.is_empty() {
        return None;
    }
    let caps = load.captures(lines[*i])?;
    let line = format!("{}{} = {}", &caps[1], names.join(" = "), caps[2].trim_end());
    let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    out[*i] = line.clone();
    let mut s = out.join("\n");
    if code.ends_with('\n') {
        s.push('\n');
    }
    Some((s, line.trim().to_string()))
}

/// Modules and builtins a script reads with an attribute without binding them: never the
/// table of a copied load line.
const MODULES: &[&str] = &[
    "pandas",
    "numpy",
    "scipy",
    "sklearn",
    "plt",
    "sns",
    "matplotlib",
    "seaborn",
    "math",
    "os",
    "sys",
    "json",
    "re",
    "datetime",
    "collections",
    "itertools",
    "statistics",
    "str",
    "dict",
    "list",
    "set",
    "int",
    "float",
    "self",
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Every rule on.
    fn repair_with(code: &str, loads: &[(String, String)], columns: &[String]) -> Repaired {
        super::repair_with(code, loads, columns, RuleSet::all())
    }

    /// Scripts each repair rule fixes (with the columns and load calls it needs): with
    /// its rule off, the script stays as written, and no other rule fires in its place.
    #[test]
    fn each_repair_rule_fixes_its_class_and_nothing_with_it_off() {
        let columns: Vec<String> = ["num. calls abandoned ", "MEANJZH", "Age"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let loads = vec![(
            "/lake/a.csv".to_string(),
            "pd.read_csv(\"/lake/a.csv\", skiprows=3, thousands=\",\")".to_string(),
        )];
        let cases: &[(Rule, &str)] = &[
            (
                Rule::PaddedNames,
                "import pandas as pd\nx = df.get('num. calls abandoned')\n",
            ),
            (
                Rule::ColumnSpelling,
                "import pandas as pd\nx = df['age'].mean()\n",
            ),
            (
                Rule::LoadLabel,
                "import pandas as pd\ndf = pd.read_csv('load:/lake/a.csv')\n",
            ),
            (
                Rule::DescribedLoad,
                "import pandas as pd\ndf = pd.read_csv('/lake/a.csv')\n",
            ),
            (
                Rule::LoadLine,
                "import pandas as pd\nload: pd.read_csv('/lake/b.csv')\nprint(df.shape)\n",
            ),
            (
                Rule::MatrixCell,
                "import pandas as pd\nr = df.corr()['Age', 'MEANJZH']\n",
            ),
            (
                Rule::PandasNp,
                "import pandas as pd\nimport numpy as np\nx = pd.np.log(2)\n",
            ),
            (Rule::MissingImports, "x = pd.Series([1, 2])\n"),
        ];
        for (rule, code) in cases {
            let on = repair_with(code, &loads, &columns);
            assert!(on.rules.contains(rule), "{rule}: {:?}", on.fixes);
            assert_ne!(on.code, *code, "{rule}");
            let off = super::repair_with(code, &loads, &columns, RuleSet::all().without(*rule));
            assert!(!off.rules.contains(rule), "{rule}: {:?}", off.fixes);
            assert_eq!(off.code, *code, "{rule}: {:?}", off.fixes);
            let none = super::repair_with(code, &loads, &columns, RuleSet::none());
            assert_eq!((none.code.as_str(), none.fixes.len()), (*code, 0), "{rule}");
        }
        assert_eq!(
            cases.len(),
            Rule::ALL
                .iter()
                .filter(|r| r.family() == super::super::rules::Family::Repair)
                .count()
        );
    }

    #[test]
    fn a_load_label_inside_a_path_string_is_removed() {
        let code = "import pandas as pd\nfees = pd.read_json('load:/lake/fees.json')\nm = pd.read_json(\"load: /lake/m.json\")\nprint(len(fees), 'load:', m)";
        let r = repair(code);
        assert!(
            r.code.contains("pd.read_json('/lake/fees.json')"),
            "{}",
            r.code
        );
        assert!(
            r.code.contains("pd.read_json(\"/lake/m.json\")"),
            "{}",
            r.code
        );
        // A printed label that is no path stays.
        assert!(
            r.code.contains("print(len(fees), 'load:', m)"),
            "{}",
            r.code
        );
        assert_eq!(r.fixes.len(), 1, "{:?}", r.fixes);
    }

    #[test]
    fn a_copied_load_line_is_assigned_and_pandas_imported() {
        // As the local model wrote it.
        let script = "# Load the file\nload: pd.read_csv(\"/lake/test_x.csv\")\nprint(\"<Age>:\", df[\"Age\"].mean())\n";
        let r = repair(script);
        assert_eq!(
            r.code,
            "import pandas as pd\n# Load the file\ndf = pd.read_csv(\"/lake/test_x.csv\")\nprint(\"<Age>:\", df[\"Age\"].mean())\n"
        );
        assert_eq!(r.fixes.len(), 2, "{:?}", r.fixes);
        assert!(r.fixes[1].contains("import pandas as pd"));
    }

    #[test]
    fn a_copied_load_line_binds_every_name_the_script_reads_as_its_table() {
        // As the local model writes it: the first script reads the table by the file's
        // stem, the debugger's by `load`.
        let script = "import pandas as pd\nload: pd.read_csv(\"/lake/sales_test.csv\", sep=\",\")\nmean_amount = sales_test['amount'].mean()\nprint(\"<Mean Amount>:\", round(mean_amount, 2), load.shape, np.pi)\n";
        let r = repair(script);
        assert!(
            r.code.contains(
                "\nsales_test = load = pd.read_csv(\"/lake/sales_test.csv\", sep=\",\")\n"
            ),
            "{}",
            r.code
        );
        assert!(r.fixes[0].contains("sales_test = load ="), "{:?}", r.fixes);
        // Names bound elsewhere, modules, attributes and strings are not the table.
        let script = "import pandas as pd\nimport numpy as np\nload: pd.read_csv('a.csv')\nt = load.copy()\nprint(t['x'].mean(), np.nan, 'file.csv', math.pi)  # other.x\n";
        let r = repair(script);
        assert!(
            r.code.contains("\nload = pd.read_csv('a.csv')\n"),
            "{}",
            r.code
        );
    }

    #[test]
    fn a_script_that_runs_as_written_is_left_alone() {
        for s in [
            "import pandas as pd\nimport numpy as np\ndf = pd.read_csv('a.csv')\nprint(np.mean(df.x))",
            "import pandas\npd = pandas\nprint(pd.__version__)",
            "from scipy.stats import shapiro\nprint(shapiro([1, 2, 3]))",
            "import scipy.stats as stats\nprint(stats.norm.cdf(0))",
            "def f(np):\n    return np.sum()\n",
            "x = dict(stats=1)\nprint(x.stats.y)\n# pd.read_csv in a comment",
            // Two load lines: which one is `df` is not clear, so nothing is guessed.
            "import pandas as pd\nload: pd.read_csv('a.csv')\nload: pd.read_csv('b.csv')\nprint(df)",
            // `df` assigned elsewhere: the load line is a harmless annotation.
            "import pandas as pd\nload: pd.read_csv('a.csv')\ndf = pd.read_csv('a.csv')\nprint(df)",
            // Bare statistics names that are imported, defined, qualified or commented.
            "from scipy.stats import shapiro, skew\nprint(shapiro(x), skew(x))",
            "from scipy.stats import (\n    shapiro,\n)\nprint(shapiro(x))",
            "from scipy.stats import *\nprint(shapiro(x))",
            "from scipy import stats\nprint(stats.shapiro(x), my_skew(x))",
            "def zscore(v):\n    return v\nprint(zscore(1))",
            "# shapiro(x) in a comment\nprint(1)",
            "import scipy.stats as st\nprint(st.skew(x))",
        ] {
            let r = repair(s);
            assert_eq!(r.code, s, "{s}");
            assert!(r.fixes.is_empty(), "{s}: {:?}", r.fixes);
        }
    }

    #[test]
    fn bare_statistics_and_model_names_are_imported_from_their_module() {
        // As the local model wrote it: `shapiro`, `skew` and
        // `kurtosis` called bare, `kurtosis` then rebound by the result.
        let r = repair(
            "import pandas as pd\ns, p = shapiro(x)\nsk = skew(x)\nkurtosis = kurtosis(x)\nm = LinearRegression().fit(a, b)\n",
        );
        assert_eq!(
            r.code,
            "from scipy.stats import shapiro, skew, kurtosis\nfrom sklearn.linear_model import LinearRegression\nimport pandas as pd\ns, p = shapiro(x)\nsk = skew(x)\nkurtosis = kurtosis(x)\nm = LinearRegression().fit(a, b)\n"
        );
        assert_eq!(r.fixes.len(), 1, "{:?}", r.fixes);
    }

    #[test]
    fn a_bare_read_of_a_described_file_uses_its_load_call() {
        let file = |path: &str, load: &str| FileContext {
            path: path.into(),
            rel: path.trim_start_matches('/').into(),
            description: format!("{path} — CSV\n  load: {load}\n  Date  date\n"),
            columns: Vec::new(),
            staged: None,
        };
        let loads = load_calls(&[
            file(
                "/lake/prices.csv",
                r#"pd.read_csv("/lake/prices.csv", thousands=",", parse_dates=["Date"])"#,
            ),
            file("/lake/plain.csv", r#"pd.read_csv("/lake/plain.csv")"#),
        ]);
        assert_eq!(loads.len(), 2);
        // As the local model wrote it: then `.dt` failed.
        let r = repair_with(
            "import pandas as pd\ndf = pd.read_csv(\"/lake/prices.csv\")\nb = pd.read_csv('/lake/plain.csv')\nc = pd.read_csv(\"/lake/prices.csv\", usecols=[0])\nprint(df['Date'].dt.weekday)",
            &loads,
            &[],
        );
        assert_eq!(
            r.code,
            "import pandas as pd\ndf = pd.read_csv(\"/lake/prices.csv\", thousands=\",\", parse_dates=[\"Date\"])\nb = pd.read_csv('/lake/plain.csv')\nc = pd.read_csv(\"/lake/prices.csv\", usecols=[0])\nprint(df['Date'].dt.weekday)"
        );
        assert_eq!(r.fixes.len(), 1, "{:?}", r.fixes);
    }

    #[test]
    fn a_padded_column_name_written_without_its_spaces_is_put_back() {
        let columns: Vec<String> = [
            "timestamp",
            "num. calls answered",
            "num. calls abandoned ",
            " avg.  wait time",
            "x ",
            " x",
            "y ",
            "y",
        ]
        .map(String::from)
        .to_vec();
        // As the local model wrote it.
        let r = repair_with(
            "a = df[\"num. calls abandoned\"].sum() / df['num. calls answered'].sum()\nw = df['avg. wait time']\nprint(df['x'], df['y'])",
            &[],
            &columns,
        );
        assert_eq!(
            r.code,
            "a = df[\"num. calls abandoned \"].sum() / df['num. calls answered'].sum()\nw = df[' avg.  wait time']\nprint(df['x'], df['y'])"
        );
        // `x ` and ` x` are two columns; `y` is one itself: left as written.
        assert_eq!(r.fixes.len(), 2, "{:?}", r.fixes);
        assert!(
            r.fixes[0].contains("num. calls abandoned "),
            "{:?}",
            r.fixes
        );
        assert_eq!(repair_with("df['timestamp']", &[], &columns).fixes.len(), 0);
        // Another spelling of one column is put back; of two columns, left alone.
        let r = repair_with(
            "t = df[['Timestamp', \"Num_Calls_Abandoned\", 'timestamp']]\nz = df['X']  # 'num_calls_answered'\n",
            &[],
            &columns,
        );
        assert_eq!(
            r.code,
            "t = df[['timestamp', \"num. calls abandoned \", 'timestamp']]\nz = df['X']  # 'num_calls_answered'\n"
        );
        assert_eq!(r.fixes.len(), 2, "{:?}", r.fixes);
        // Not a subscript or list item (a label, a call's argument): left as written.
        let s = "print('num calls answered', df.get('Timestamp'))";
        assert_eq!(repair_with(s, &[], &columns).code, s);
        // A line break in a name (DA-Code's world-data header) is written escaped.
        let wrapped = ["Density\n(P/Km2)".to_string()];
        let r = repair_with("d = df['Density (P/Km2)']", &[], &wrapped);
        assert_eq!(r.code, "d = df['Density\\n(P/Km2)']");
    }

    #[test]
    fn a_column_mistyped_by_one_letter_is_put_back_where_the_script_reads_it() {
        let columns: Vec<String> = [
            "USFLUX", "MEANGAM", "MEANJZH", "MEANJZD", "TOTUSJZ", "Close", "age",
        ]
        .map(String::from)
        .to_vec();
        // As the local model wrote it: read on its first line.
        let read_first =
            "df[\"MEANGJZH\"] = df[\"MEANGJZH\"] + 1e-10\nv = df['MEANGJZH'].iloc[0]\n";
        let r = repair_with(read_first, &[], &columns);
        assert_eq!(
            r.code,
            "df[\"MEANJZH\"] = df[\"MEANJZH\"] + 1e-10\nv = df['MEANJZH'].iloc[0]\n"
        );
        assert_eq!(r.fixes, ["the column \"MEANJZH\" was written \"MEANGJZH\""]);
        // Swapped letters, and a comparison reads.
        let r = repair_with("m = df['TOTUSZJ'] == 0", &[], &columns);
        assert_eq!(r.code, "m = df['TOTUSJZ'] == 0");
        // A new column first assigned is the script's own: left alone, then too.
        let new = "df['Close2'] = df['Close'] * 2\nprint(df['Close2'])";
        assert_eq!(repair_with(new, &[], &columns).code, new);
        // One letter from two columns, or a short name: no single reading.
        for s in ["x = df['MEANJZX']", "x = df['agee']"] {
            assert_eq!(repair_with(s, &[], &columns).code, s);
        }
    }

    #[test]
    fn pandas_np_becomes_numpy() {
        // As the local model wrote it.
        let r = repair("import pandas as pd\ndf['x'] = df['x'].apply(lambda x: pd.np.log10(x))");
        assert_eq!(
            r.code,
            "import numpy as np\nimport pandas as pd\ndf['x'] = df['x'].apply(lambda x: np.log10(x))"
        );
        assert_eq!(r.fixes.len(), 2, "{:?}", r.fixes);
    }

    #[test]
    fn missing_imports_go_after_a_future_import() {
        let r =
            repair("from __future__ import annotations\nprint(np.arange(3), stats.norm.cdf(0))");
        assert_eq!(
            r.code,
            "from __future__ import annotations\nimport numpy as np\nfrom scipy import stats\nprint(np.arange(3), stats.norm.cdf(0))"
        );
        assert_eq!(
            r.fixes,
            vec!["added the missing `import numpy as np`, `from scipy import stats`".to_string()]
        );
    }
}
