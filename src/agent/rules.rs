//! The rules: every repair, guard and remedy the loop adds to DS-STAR's Algorithm 1.
//!
//! Each rule is named, addresses one failure class (what a model gets wrong, said without
//! any benchmark question), is switched by `--rules` (`default`, `none`, names and
//! families, `-NAME` to leave one out), and is counted each time it fires: an
//! [`Event::Rule`](super::record::Event::Rule) in the trace, a count in `summary.json`'s
//! `rules`. With `--rules none` the loop is Algorithm 1 bare; the sandbox and its limits
//! stay, and so do the reading of replies (a fenced block, a verdict line) and the fitting
//! of prompts into the model's context, which every run needs.

use serde::Serialize;
use std::fmt;
use std::str::FromStr;

/// Where in the loop a rule acts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    /// A generated script is rewritten before it runs.
    Repair,
    /// The debugger is told more than the traceback, or stopped.
    Debug,
    /// A planner's step is replaced, or the plan cut.
    Plan,
    /// A verdict is checked against the output, or not asked.
    Verify,
}

impl Family {
    /// Every family.
    pub const ALL: [Family; 4] = [Family::Repair, Family::Debug, Family::Plan, Family::Verify];

    /// The name on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Family::Repair => "repair",
            Family::Debug => "debug",
            Family::Plan => "plan",
            Family::Verify => "verify",
        }
    }
}

macro_rules! rules {
    ($($variant:ident = $name:literal, $family:ident, $class:literal;)*) => {
        /// One rule (see the module doc).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
        #[serde(into = "&'static str")]
        pub enum Rule {
            $(
                #[doc = $class]
                $variant,
            )*
        }

        impl Rule {
            /// Every rule, in the order they are listed and counted.
            pub const ALL: &'static [Rule] = &[$(Rule::$variant),*];

            /// The rule's name (`--rules`, the trace, `summary.json`).
            pub fn name(self) -> &'static str {
                match self { $(Rule::$variant => $name,)* }
            }

            /// Where it acts.
            pub fn family(self) -> Family {
                match self { $(Rule::$variant => Family::$family,)* }
            }

            /// The failure class it addresses.
            pub fn class(self) -> &'static str {
                match self { $(Rule::$variant => $class,)* }
            }
        }
    };
}

rules! {
    MethodCalls = "method-calls", Plan,
        "a question names a statistical method a small model misremembers: its calls are shown to every role";
    PaddedNames = "padded-names", Repair,
        "a column whose name carries spaces a person does not see is written without them";
    ColumnSpelling = "column-spelling", Repair,
        "a column is read under another spelling (case, `_` for spaces, one letter off) of exactly one column";
    LoadLabel = "load-label", Repair,
        "a description's `load:` label is copied into a path string";
    DescribedLoad = "described-load", Repair,
        "a bare `pd.read_csv(path)` leaves out the options the file's description gives";
    LoadLine = "load-line", Repair,
        "a description's `load:` line is copied verbatim, an annotation that assigns nothing";
    MatrixCell = "matrix-cell", Repair,
        "a cell of a `.corr()`/`.cov()` matrix is read with a tuple key";
    PandasNp = "pandas-np", Repair,
        "`pd.np`, removed in pandas 2, is used";
    MissingImports = "missing-imports", Repair,
        "a module alias or a statistics function is used without its import";
    Remedies = "remedies", Debug,
        "a well-known pandas/scipy exception the debugger hands back unfixed: its cure is added to the error";
    KeyHolders = "key-holders", Debug,
        "a KeyError names a column another given file holds: that file is named to the debugger";
    ChangeCourse = "change-course", Debug,
        "the debugger repeats a script or an error: it is shown its attempts at another temperature, then stopped";
    DueStep = "due-step", Plan,
        "the planner's step computes none of the requested quantities still missing";
    RepeatedStep = "repeated-step", Plan,
        "the planner proposes a step the plan already has";
    FailedStep = "failed-step", Plan,
        "the router adds a step on a script that still fails";
    UnknownNames = "unknown-names", Plan,
        "the question or a step names a column no given file has: retrieval is asked for more files, and the answer says so";
    Constraints = "constraints", Verify,
        "the verifier says sufficient yet marks one of the question's constraints not applied";
    VerdictAgain = "verdict-again", Verify,
        "the verifier's reply has no readable verdict: it is asked once more for the verdict alone";
    RepeatedOutput = "repeated-output", Verify,
        "a new step's output is the previous round's again";
    LastComplete = "last-complete", Verify,
        "the rounds end on a step that lost a value an earlier plan's script gave";
}

impl From<Rule> for &'static str {
    fn from(r: Rule) -> &'static str {
        r.name()
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which rules are on: `--rules`. `Default` is every rule.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct RuleSet {
    bits: u64,
}

impl Default for RuleSet {
    fn default() -> Self {
        RuleSet::all()
    }
}

impl RuleSet {
    /// Every rule (`default`).
    pub fn all() -> RuleSet {
        RuleSet {
            bits: Rule::ALL.iter().fold(0, |b, r| b | Self::bit(*r)),
        }
    }

    /// No rule (`none`): Algorithm 1 bare.
    pub fn none() -> RuleSet {
        RuleSet { bits: 0 }
    }

    /// These rules only.
    pub fn only(rules: &[Rule]) -> RuleSet {
        RuleSet {
            bits: rules.iter().fold(0, |b, r| b | Self::bit(*r)),
        }
    }

    /// This set without `rule`.
    pub fn without(self, rule: Rule) -> RuleSet {
        RuleSet {
            bits: self.bits & !Self::bit(rule),
        }
    }

    fn bit(rule: Rule) -> u64 {
        1 << (rule as u64)
    }

    /// Whether `rule` is on.
    pub fn on(self, rule: Rule) -> bool {
        self.bits & Self::bit(rule) != 0
    }

    /// The rules on, in [`Rule::ALL`]'s order.
    pub fn rules(self) -> Vec<Rule> {
        Rule::ALL.iter().copied().filter(|r| self.on(*r)).collect()
    }

    /// The shortest spelling that parses back to this set: `default`, `none`,
    /// `default,-NAME,…` or `NAME,…`.
    pub fn spec(self) -> String {
        if self == RuleSet::all() {
            return "default".into();
        }
        if self == RuleSet::none() {
            return "none".into();
        }
        let off: Vec<&str> = Rule::ALL
            .iter()
            .filter(|r| !self.on(**r))
            .map(|r| r.name())
            .collect();
        let on: Vec<&str> = self.rules().iter().map(|r| r.name()).collect();
        if off.len() < on.len() {
            let mut s = "default".to_string();
            for n in off {
                s.push_str(",-");
                s.push_str(n);
            }
            s
        } else {
            on.join(",")
        }
    }

    /// Every name `--rules` takes, for messages and help.
    pub fn names() -> String {
        let mut s = String::from("default, none, the families ");
        s.push_str(
            &Family::ALL
                .iter()
                .map(|f| f.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        );
        s.push_str(", and the rules ");
        s.push_str(
            &Rule::ALL
                .iter()
                .map(|r| r.name())
                .collect::<Vec<_>>()
                .join(", "),
        );
        s
    }
}

impl fmt::Debug for RuleSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RuleSet({})", self.spec())
    }
}

impl fmt::Display for RuleSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.spec())
    }
}

impl Serialize for RuleSet {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.spec())
    }
}

/// A `--rules` value that names no rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown rule {name:?}; the names are {}", RuleSet::names())]
pub struct UnknownRule {
    /// The name given.
    pub name: String,
}

impl FromStr for RuleSet {
    type Err = UnknownRule;

    /// `default` (every rule), `none`, rule or family names separated by commas, each
    /// adding to the set, and `-NAME` taking one out (`default,-repair` leaves the
    /// repair family out). A list that starts with a name (not `-`) starts empty.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut set = RuleSet::none();
        for (i, token) in s.split(',').map(str::trim).enumerate() {
            if token.is_empty() {
                continue;
            }
            let (remove, name) = match token.strip_prefix('-') {
                Some(n) => (true, n.trim()),
                None => (false, token),
            };
            if i == 0 && remove {
                set = RuleSet::all();
            }
            let chosen: Vec<Rule> = match name {
                "default" | "all" => Rule::ALL.to_vec(),
                "none" => Vec::new(),
                n => match Family::ALL.iter().find(|f| f.as_str() == n) {
                    Some(f) => Rule::ALL
                        .iter()
                        .copied()
                        .filter(|r| r.family() == *f)
                        .collect(),
                    None => vec![Rule::ALL
                        .iter()
                        .copied()
                        .find(|r| r.name() == n)
                        .ok_or_else(|| UnknownRule {
                            name: n.to_string(),
                        })?],
                },
            };
            for r in chosen {
                set.bits = if remove {
                    set.bits & !Self::bit(r)
                } else {
                    set.bits | Self::bit(r)
                };
            }
        }
        Ok(set)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_fit_the_set() {
        assert!(Rule::ALL.len() <= 64);
        assert_eq!(Rule::ALL[0], Rule::MethodCalls);
        for (i, r) in Rule::ALL.iter().enumerate() {
            assert_eq!(*r as usize, i);
            assert!(!Rule::ALL[..i].iter().any(|o| o.name() == r.name()));
            assert!(!r.class().is_empty());
            assert!(!Family::ALL.iter().any(|f| f.as_str() == r.name()));
        }
    }

    #[test]
    fn the_switch_parses_defaults_names_families_and_leave_one_out() {
        let p = |s: &str| s.parse::<RuleSet>().unwrap();
        assert_eq!(p("default"), RuleSet::all());
        assert_eq!(p("none"), RuleSet::none());
        assert_eq!(p(""), RuleSet::none());
        assert_eq!(
            p("missing-imports, remedies"),
            RuleSet::only(&[Rule::MissingImports, Rule::Remedies])
        );
        assert_eq!(
            p("default,-remedies"),
            RuleSet::all().without(Rule::Remedies)
        );
        assert_eq!(p("-remedies"), RuleSet::all().without(Rule::Remedies));
        let no_repair = p("default,-repair");
        assert!(Rule::ALL
            .iter()
            .all(|r| no_repair.on(*r) == (r.family() != Family::Repair)));
        assert_eq!(p("verify").rules().len(), 4);
        let e = "nonsense".parse::<RuleSet>().unwrap_err();
        assert!(e.to_string().contains("missing-imports"), "{e}");
        assert!("default,-nonsense".parse::<RuleSet>().is_err());
    }

    #[test]
    fn the_spec_parses_back_to_the_same_set() {
        for set in [
            RuleSet::all(),
            RuleSet::none(),
            RuleSet::all().without(Rule::LastComplete),
            RuleSet::only(&[Rule::PandasNp]),
        ] {
            assert_eq!(
                set.spec().parse::<RuleSet>().unwrap(),
                set,
                "{}",
                set.spec()
            );
        }
        assert_eq!(
            RuleSet::all().without(Rule::PandasNp).spec(),
            "default,-pandas-np"
        );
        assert_eq!(
            serde_json::to_string(&RuleSet::only(&[Rule::PandasNp])).unwrap(),
            "\"pandas-np\""
        );
        assert_eq!(
            serde_json::to_string(&Rule::DueStep).unwrap(),
            "\"due-step\""
        );
    }
}
