//! `symbols.json`: ids that flow — values a response handed out (under an identifier-like key)
//! that a later request sent back (in its path, query or body). Each becomes a named, typed
//! symbol with where it first appeared and how many exchanges mention it.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::Value;
use wraith_model::{Symbol, SymbolTable};

use crate::observe::{Obs, escape_token};
use crate::values;

struct Info {
    first_obs: usize,
    first_source: String,
    first_path: String,
    occurrences: u64,
    flows: bool,
    is_number: bool,
}

fn is_candidate(s: &str) -> bool {
    s.len() >= 2 && s.len() <= 128 && s.bytes().any(|b| b.is_ascii_digit())
}

fn walk<'v>(
    v: &'v Value,
    key: Option<&str>,
    pointer: &mut String,
    out: &mut Vec<(String, &'v Value)>,
) {
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                let len = pointer.len();
                pointer.push('/');
                pointer.push_str(&escape_token(k));
                walk(child, Some(k), pointer, out);
                pointer.truncate(len);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                let len = pointer.len();
                pointer.push('/');
                pointer.push_str(&i.to_string());
                walk(child, key, pointer, out);
                pointer.truncate(len);
            }
        }
        Value::String(_) | Value::Number(_) if key.is_some_and(values::is_identifier_key) => {
            out.push((pointer.clone(), v));
        }
        _ => {}
    }
}

fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Build the symbol table from observations in (session, index) order.
pub fn symbol_table(obs: &[Obs<'_>]) -> SymbolTable {
    let mut b = SymbolBuilder::default();
    for (idx, o) in obs.iter().enumerate() {
        b.observe(idx, o, o.resp_json().as_ref());
    }
    b.finish()
}

/// [`symbol_table`] one observation at a time, so a caller walking every response body for
/// several purposes parses each once.
#[derive(Default)]
pub struct SymbolBuilder {
    infos: HashMap<String, Info>,
}

impl SymbolBuilder {
    /// Add observation `idx` (observations must come in (session, index) order), `body` being
    /// its parsed response body.
    pub fn observe(&mut self, idx: usize, o: &Obs<'_>, body: Option<&Value>) {
        let infos = &mut self.infos;
        let mut touched: HashSet<String> = HashSet::new();
        // Request side: values flowing back in.
        let mut request_values: Vec<String> = o
            .segments
            .iter()
            .map(|s| values::decode_segment(s))
            .collect();
        request_values.extend(o.query.iter().map(|(_, v)| v.clone()));
        request_values.extend(o.req_fields.iter().filter_map(|(_, v)| scalar(v)));
        for v in request_values {
            if let Some(info) = infos.get_mut(&v)
                && info.first_obs < idx
            {
                info.flows = true;
                if touched.insert(v) {
                    info.occurrences += 1;
                }
            }
        }
        // Response side: values handed out.
        if let Some(body) = body {
            let mut found = Vec::new();
            walk(body, None, &mut String::new(), &mut found);
            for (pointer, v) in found {
                let Some(s) = scalar(v) else { continue };
                if !is_candidate(&s) {
                    continue;
                }
                match infos.get_mut(&s) {
                    Some(info) => {
                        if touched.insert(s) {
                            info.occurrences += 1;
                        }
                    }
                    None => {
                        touched.insert(s.clone());
                        infos.insert(
                            s,
                            Info {
                                first_obs: idx,
                                first_source: o.source.clone(),
                                first_path: format!("$.response.body{pointer}"),
                                occurrences: 1,
                                flows: false,
                                is_number: v.is_number(),
                            },
                        );
                    }
                }
            }
        }
    }

    /// The symbol table of everything observed.
    pub fn finish(self) -> SymbolTable {
        let infos = self.infos;
        let mut flowing: Vec<(&String, &Info)> = infos.iter().filter(|(_, i)| i.flows).collect();
        flowing.sort_by(|a, b| (a.1.first_obs, a.0).cmp(&(b.1.first_obs, b.0)));
        let mut symbols = BTreeMap::new();
        for (n, (value, info)) in flowing.into_iter().enumerate() {
            let (symbol_type, pattern) = classify(value, info.is_number);
            symbols.insert(
                format!("$id_{}", n + 1),
                Symbol {
                    symbol_type,
                    format_pattern: pattern,
                    first_seen_exchange: info.first_source.clone(),
                    first_seen_path: info.first_path.clone(),
                    occurrences: info.occurrences,
                },
            );
        }
        SymbolTable {
            schema_version: 1,
            symbols,
            // Set by whoever writes the model beside the table, from the model's own bytes.
            model_digest: None,
        }
    }
}

fn classify(value: &str, is_number: bool) -> (String, Option<String>) {
    if values::is_uuid(value) {
        return (
            "Uuid".into(),
            Some(values::shape_pattern(&wraith_model::IdShape::Uuid)),
        );
    }
    if is_number || values::is_digits(value) {
        return ("Integer".into(), Some("[0-9]+".into()));
    }
    let v = Value::String(value.to_string());
    match values::learn_id_shape(&[&v]) {
        Some(shape @ wraith_model::IdShape::Token { .. }) => {
            let pattern = values::shape_pattern(&shape);
            let prefixed =
                matches!(&shape, wraith_model::IdShape::Token { prefix, .. } if !prefix.is_empty());
            (
                if prefixed { "PrefixedId" } else { "String" }.into(),
                Some(pattern),
            )
        }
        _ => ("String".into(), None),
    }
}
