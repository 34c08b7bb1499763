//! `[limits]`: the sizes the brain and the tool schemas hold requests to.

use serde::Deserialize;

use crate::settings::ConfigProblem;

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct LimitsConfig {
    pub default_page_size: u32,
    /// Larger requested page sizes are clamped to this silently.
    pub max_page_size: u32,
    /// `lookup_catalog` with more ids than this is refused with -32602.
    pub max_lookup_batch: u32,
    pub max_cart_lines: u32,
    pub max_line_quantity: u32,
    pub max_body_bytes: usize,
}

impl Default for LimitsConfig {
    fn default() -> Self {
        Self {
            default_page_size: 10,
            max_page_size: 50,
            max_lookup_batch: 50,
            max_cart_lines: 100,
            max_line_quantity: 999,
            max_body_bytes: 1024 * 1024,
        }
    }
}

impl LimitsConfig {
    pub fn problems(&self) -> Vec<ConfigProblem> {
        let mut problems = Vec::new();
        for (key, value, max) in [
            ("limits.default_page_size", self.default_page_size, 250),
            ("limits.max_page_size", self.max_page_size, 250),
            ("limits.max_lookup_batch", self.max_lookup_batch, 250),
            ("limits.max_cart_lines", self.max_cart_lines, 500),
            (
                "limits.max_line_quantity",
                self.max_line_quantity,
                1_000_000,
            ),
        ] {
            if value == 0 || value > max {
                problems.push(ConfigProblem::new(
                    key,
                    format!("must be between 1 and {max}"),
                ));
            }
        }
        if self.default_page_size > self.max_page_size {
            problems.push(ConfigProblem::new(
                "limits.default_page_size",
                "must not exceed limits.max_page_size",
            ));
        }
        if self.max_body_bytes < 1024 {
            problems.push(ConfigProblem::new(
                "limits.max_body_bytes",
                "must be at least 1024",
            ));
        }
        problems
    }
}
