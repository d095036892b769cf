//! The documents' copies of `make compare`'s figures.
//!
//! - The scenario tables: the run writes every row's figures (its samples, missed expiries
//!   and CPU shares) to `docs/compare/results.json`, copies the plots beside it, and rewrites
//!   the tables between `<!-- compare:NAME -->` markers from it, in whichever document holds
//!   them (docs/compare.md; `crate::markers`).
//! - The system-call paths' table is `paths_table`'s.
//!
//! The tests below (and `crate::docs`'s) render the blocks again from the stored data and
//! fail if a document says anything else.

use super::figures::{self, Figures};
use super::scenarios::Outcome;
use crate::markers;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// One scenario's rows, as measured.
pub struct Measured {
    pub name: String,
    pub outcomes: Vec<Outcome>,
}

fn tag(name: &str) -> String {
    format!("compare:{name}")
}

/// The table of one scenario, as the documents and the report show it.
pub fn table(outcomes: &[Outcome]) -> String {
    let mut out = String::from(figures::HEADER);
    for o in outcomes {
        out.push_str(&figures::row(&o.label, &o.figures));
    }
    out
}

fn block(outcomes: &[Outcome]) -> String {
    format!("\n{}", table(outcomes))
}

pub fn to_json(measured: &[Measured]) -> Value {
    let rows = |outcomes: &[Outcome]| -> Vec<Value> {
        outcomes
            .iter()
            .map(|o| {
                json!({
                    "label": o.label,
                    "samples_us": o.figures.samples,
                    "missed": o.figures.missed,
                    "share_by_uid": o.figures.share_by_uid.iter()
                        .map(|(uid, share)| (uid.to_string(), json!(share)))
                        .collect::<serde_json::Map<_, _>>(),
                })
            })
            .collect()
    };
    json!({
        "scenarios": measured.iter().map(|m| json!({"name": m.name, "rows": rows(&m.outcomes)}))
            .collect::<Vec<_>>()
    })
}

pub fn from_json(value: &Value) -> Result<Vec<Measured>, String> {
    let bad = || "docs/compare/results.json is not what make compare writes".to_string();
    let scenarios = value["scenarios"].as_array().ok_or_else(bad)?;
    scenarios
        .iter()
        .map(|s| {
            let outcomes = s["rows"]
                .as_array()
                .ok_or_else(bad)?
                .iter()
                .map(|r| {
                    let mut figures = Figures {
                        samples: r["samples_us"]
                            .as_array()
                            .ok_or_else(bad)?
                            .iter()
                            .filter_map(Value::as_u64)
                            .collect(),
                        missed: r["missed"].as_u64().ok_or_else(bad)?,
                        ..Figures::default()
                    };
                    for (uid, share) in r["share_by_uid"].as_object().ok_or_else(bad)? {
                        let uid = uid.parse().map_err(|_| bad())?;
                        figures
                            .share_by_uid
                            .insert(uid, share.as_f64().ok_or_else(bad)?);
                    }
                    Ok(Outcome {
                        label: r["label"].as_str().ok_or_else(bad)?.to_string(),
                        figures,
                    })
                })
                .collect::<Result<Vec<_>, String>>()?;
            Ok(Measured {
                name: s["name"].as_str().ok_or_else(bad)?.to_string(),
                outcomes,
            })
        })
        .collect()
}

fn paths() -> (PathBuf, PathBuf) {
    let root = crate::build::workspace_root();
    let docs = root.join("docs/compare");
    (root, docs)
}

/// After a successful run: the plots and `results.json` into `docs/compare/`, and the
/// documents' tables rewritten.
pub fn publish(out: &Path, measured: &[Measured]) -> Result<(), String> {
    let (root, docs) = paths();
    std::fs::create_dir_all(&docs).map_err(|e| format!("cannot create {}: {e}", docs.display()))?;
    for m in measured {
        let plot = format!("{}-cdf.svg", m.name);
        std::fs::copy(out.join(&plot), docs.join(&plot))
            .map_err(|e| format!("cannot copy {plot}: {e}"))?;
    }
    let json = serde_json::to_string_pretty(&to_json(measured)).map_err(|e| e.to_string())?;
    std::fs::write(docs.join("results.json"), json + "\n")
        .map_err(|e| format!("cannot write docs/compare/results.json: {e}"))?;
    for m in measured {
        markers::write_block(&root, &tag(&m.name), &block(&m.outcomes))?;
    }
    Ok(())
}

/// Rewrites the documents' tables from `docs/compare/results.json` as it is (no run).
pub fn render_stored() -> Result<Vec<PathBuf>, String> {
    let (root, docs) = paths();
    let results = docs.join("results.json");
    let text = std::fs::read_to_string(&results)
        .map_err(|e| format!("cannot read {}: {e}", results.display()))?;
    let value: Value = serde_json::from_str(&text).map_err(|e| format!("{e}"))?;
    let mut written = Vec::new();
    for m in from_json(&value)? {
        let doc = markers::write_block(&root, &tag(&m.name), &block(&m.outcomes))?;
        if !written.contains(&doc) {
            written.push(doc);
        }
    }
    Ok(written)
}

/// `None` if the documents' tables are those of `docs/compare/results.json`, else what
/// differs.
pub fn check() -> Result<Option<String>, String> {
    let (root, docs) = paths();
    let results = docs.join("results.json");
    let text = std::fs::read_to_string(&results)
        .map_err(|e| format!("cannot read {}: {e}", results.display()))?;
    let value: Value = serde_json::from_str(&text).map_err(|e| format!("{e}"))?;
    for m in from_json(&value)? {
        if let Some(problem) = markers::check_block(&root, &tag(&m.name), &block(&m.outcomes))? {
            return Ok(Some(format!(
                "{problem}\n(the table is not what docs/compare/results.json holds: run make compare)"
            )));
        }
    }
    Ok(None)
}

/// The names of the scenario tables' blocks in `docs/compare/results.json`.
pub fn stored_tags() -> Result<Vec<String>, String> {
    let results = paths().1.join("results.json");
    let text = std::fs::read_to_string(&results)
        .map_err(|e| format!("cannot read {}: {e}", results.display()))?;
    let value: Value = serde_json::from_str(&text).map_err(|e| format!("{e}"))?;
    Ok(from_json(&value)?.iter().map(|m| tag(&m.name)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_round_trip_through_json() {
        let mut f = Figures {
            samples: vec![10, 2000],
            missed: 3,
            ..Figures::default()
        };
        f.share_by_uid.insert(1, 0.5);
        let measured = [Measured {
            name: "s".into(),
            outcomes: vec![Outcome {
                label: "Linux".into(),
                figures: f.clone(),
            }],
        }];
        let back = from_json(&to_json(&measured)).unwrap();
        assert_eq!(back[0].name, "s");
        assert_eq!(back[0].outcomes[0].figures, f);
        assert_eq!(table(&back[0].outcomes), table(&measured[0].outcomes));
    }

    /// The documents' compare tables are what the last `make compare` measured.
    #[test]
    fn the_documents_tables_are_the_last_compare_runs() {
        if let Some(problem) = check().unwrap() {
            panic!("{problem}");
        }
    }
}
