//! Prices of models, for the cost of calls.

use serde::{Deserialize, Serialize};
use std::collections::HashMap;

use super::Usage;

/// The price of a model in USD per million tokens (the unit providers publish).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// USD per million prompt tokens.
    pub input_per_mtok: f64,
    /// USD per million completion tokens.
    pub output_per_mtok: f64,
}

impl Price {
    /// The cost of `usage` in USD.
    pub fn cost(&self, usage: &Usage) -> f64 {
        (usage.prompt_tokens as f64 * self.input_per_mtok
            + usage.completion_tokens as f64 * self.output_per_mtok)
            / 1_000_000.0
    }

    /// Why this price is unusable, if it is (negative or not a number).
    pub(crate) fn check(&self) -> Result<(), String> {
        for (name, v) in [
            ("input_per_mtok", self.input_per_mtok),
            ("output_per_mtok", self.output_per_mtok),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(format!("{name} must be a number ≥ 0, not {v}"));
            }
        }
        Ok(())
    }
}

/// The cost of a call: priced by the model that answered, else by the model asked for
/// (servers answer with dated names, `gpt-4o-mini-2024-07-18` for `gpt-4o-mini`, while
/// price tables use the short one).
pub(crate) fn cost_of(
    prices: &HashMap<String, Price>,
    answered: &str,
    asked: &str,
    usage: &Usage,
) -> Option<f64> {
    prices
        .get(answered)
        .or_else(|| prices.get(asked))
        .map(|p| p.cost(usage))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_per_million_tokens_by_answered_then_asked_model() {
        let prices = HashMap::from([(
            "gpt-4o-mini".to_string(),
            Price {
                input_per_mtok: 0.15,
                output_per_mtok: 0.60,
            },
        )]);
        let usage = Usage {
            prompt_tokens: 2_000_000,
            completion_tokens: 500_000,
            cached_tokens: 0,
        };
        let c = cost_of(&prices, "gpt-4o-mini-2024-07-18", "gpt-4o-mini", &usage).unwrap();
        assert!((c - 0.6).abs() < 1e-12, "{c}");
        assert_eq!(cost_of(&prices, "other", "other", &usage), None);
    }

    #[test]
    fn negative_and_nan_prices_are_refused() {
        let p = |i, o| Price {
            input_per_mtok: i,
            output_per_mtok: o,
        };
        assert!(p(0.0, 1.0).check().is_ok());
        assert!(p(-1.0, 1.0).check().unwrap_err().contains("input_per_mtok"));
        assert!(p(1.0, f64::NAN)
            .check()
            .unwrap_err()
            .contains("output_per_mtok"));
    }
}
