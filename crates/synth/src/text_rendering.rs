//! Text rendering: a write's answer field made from its sent text (a status posted as
//! `it's #rust` answers `content: "<p>it&#39;s <a href=\"…/tags/rust\" …>#rust</a></p>"`),
//! learned from the recordings ([`wraith_model::TextRendering`]). Not how the engine applies
//! it (the engine's `op_create` / `op_update`), and not the arrays a text names (see
//! [`crate::text_tags`] and [`crate::mentions`]).
//!
//! The rule is a fixed prefix and suffix around the text, read one unit at a time: a
//! character (rendered as itself or as a learned escape) or a token (a sigil such as `#` or
//! `@` and the word after it, rendered by a learned template). Synth learns it from pairs of
//! (sent text, answered field) of one route's 2xx answers:
//!
//! 1. The prefix and suffix from the longest text found verbatim inside its answer; at least
//!    three distinct texts must be answered as exactly prefix + text + suffix.
//! 2. Each unit's rendering from the pairs that leave it the only unknown: a pair answered as
//!    prefix + text + suffix shows every character and sigil in it rendered as itself; a pair
//!    with one unknown character or one token of an unknown sigil shows what it renders as.
//!    Pairs vote; each unknown takes the rendering most pairs showed, round after round, until
//!    no pair teaches anything new.
//! 3. The rule stands when it reproduces at least 90% of the pairs exactly and renders
//!    something other than the text itself. The pairs it misses (a link the API made of a
//!    URL, a quote's preamble) are answered as the rule renders them: closer than another
//!    recording's text, which is what the template alone would answer.
//!
//! An update of the same entity type takes the create's rule when every recorded 2xx answer
//! of the update that sent the text field agrees with it ([`for_updates`]), and so does a
//! route copying a record of the type ([`for_clones`]). Never from route or field names.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use rayon::prelude::*;
use serde_json::Value;
use wraith_model::{Route, StateOp, TextRendering, TextUnit, TokenRendering, text_units};

use crate::mentions;
use crate::observe::Obs;
use crate::routes::RouteGroup;
use crate::values;

/// Shortest text that counts as found verbatim in an answer: shorter ones (`a`, `ok`) turn up
/// inside unrelated strings by chance.
const MIN_TEXT_LEN: usize = 3;

/// Fewest distinct texts answered as exactly prefix + text + suffix.
const MIN_PLAIN_TEXTS: usize = 3;

/// The text-rendering rule of every route (same order as the groups); `None` for the others.
pub fn text_rendering(groups: &[RouteGroup], obs: &[Obs<'_>]) -> Vec<Option<TextRendering>> {
    // Routes are independent; `collect` keeps the groups' order, so the model is the same
    // bytes on any number of threads.
    groups
        .par_iter()
        .map(|g| {
            if matches!(g.method.as_str(), "GET" | "HEAD" | "DELETE") {
                return None;
            }
            learn_route(g, obs)
        })
        .collect()
}

/// `rules` (from [`text_rendering`]) with each update route's rule set to the rule of a create
/// of the same entity type, when at least one recorded 2xx answer of the update sent the
/// rule's text field and every such answer holding the field is exactly its rendering (in
/// place of a rule the update learned from its own answers, if any).
pub fn for_updates(
    groups: &[RouteGroup],
    routes: &[Route],
    obs: &[Obs<'_>],
    mut rules: Vec<Option<TextRendering>>,
) -> Vec<Option<TextRendering>> {
    // An update's own rule gives way to the create's when the update's answers agree with
    // it: the create's is learned from more texts (its escapes and tokens).
    let taken: Vec<(usize, TextRendering)> = mentions::create_rules_of_updates(routes, &rules)
        .into_iter()
        .map(|(gi, rule)| (gi, rule.clone()))
        .collect();
    for (gi, rule) in taken {
        let Some(g) = groups.get(gi) else {
            continue;
        };
        if agrees(g, obs, &rule) {
            rules[gi] = Some(rule);
        }
    }
    rules
}

/// A copying route (`Route::record_clone`) without a rule of its own takes the rule of its
/// type's create when every recorded 2xx answer of it that sent the text field agrees with it,
/// and one did: a volume's clone named `data-copy` answers `filesystem_path` rendered from that
/// label, as the type's creates do, where its one recording is too few to learn a rule from.
pub fn for_clones(groups: &[RouteGroup], built: &mut [Route], obs: &[Obs<'_>]) {
    let taken: Vec<(usize, TextRendering)> = built
        .iter()
        .enumerate()
        .filter(|(_, r)| r.text_rendering.is_none())
        .filter_map(|(gi, r)| {
            let ty = &r.record_clone.as_ref()?.entity_type;
            let rule = built.iter().find_map(|c| {
                c.text_rendering.as_ref().filter(|_| {
                    c.state_op == Some(StateOp::Create) && c.entity_type.as_ref() == Some(ty)
                })
            })?;
            agrees(groups.get(gi)?, obs, rule).then(|| (gi, rule.clone()))
        })
        .collect();
    for (gi, rule) in taken {
        if let Some(route) = built.get_mut(gi) {
            route.text_rendering = Some(rule);
        }
    }
}

/// Whether every 2xx answer of `g` whose request sent `rule`'s text field holds at `rule.at`
/// the rule's rendering of it (or nothing there), and at least one does.
fn agrees(g: &RouteGroup, obs: &[Obs<'_>], rule: &TextRendering) -> bool {
    let field = rule
        .at
        .trim_start_matches('/')
        .replace("~1", "/")
        .replace("~0", "~");
    let mut agreed = 0usize;
    for &i in g.obs.iter().filter(|&&i| values::is_2xx(obs[i].status)) {
        let Some(text) = text_of(&obs[i], &rule.text_field) else {
            continue;
        };
        let Some(body) = obs[i].resp_json_levels(1) else {
            continue;
        };
        match body.get(&field).and_then(Value::as_str) {
            Some(answered) if answered == rule.render(text) => agreed += 1,
            Some(_) => return false,
            None => {}
        }
    }
    agreed > 0
}

fn text_of<'o>(o: &'o Obs<'_>, pointer: &str) -> Option<&'o str> {
    o.req_fields
        .iter()
        .find(|(p, _)| p == pointer)
        .and_then(|(_, v)| v.as_str())
}

/// The rule of one write route, if its answers bear one out.
fn learn_route(g: &RouteGroup, obs: &[Obs<'_>]) -> Option<TextRendering> {
    let answered: Vec<&Obs<'_>> = g
        .obs
        .iter()
        .map(|&i| &obs[i])
        .filter(|o| values::is_2xx(o.status))
        .collect();
    // Cheap test first: only a route whose answers hold some sent text at all can render it.
    let holding = answered
        .iter()
        .filter(|o| {
            let texts = o
                .req_fields
                .iter()
                .filter_map(|(_, v)| v.as_str())
                .filter(|s| s.len() >= MIN_TEXT_LEN);
            o.response_holds_any(texts)
        })
        .count();
    if holding < MIN_PLAIN_TEXTS {
        return None;
    }
    let bodies: Vec<(&Obs<'_>, serde_json::Map<String, Value>)> = answered
        .iter()
        .filter_map(|o| match o.resp_json_levels(1) {
            Some(Value::Object(body)) => Some((*o, body)),
            _ => None,
        })
        .collect();
    // First pass, counts only: per (answer field, text field), how many answers hold the
    // text inside a longer string (a wrapping) and how many are the text verbatim (an echo).
    let mut counts: BTreeMap<(&str, &str), (usize, usize, usize)> = BTreeMap::new();
    for (o, body) in &bodies {
        for (field, v) in body {
            let Value::String(answer) = v else {
                continue;
            };
            for (pointer, sent) in &o.req_fields {
                if let Some(text) = sent.as_str() {
                    let c = counts
                        .entry((field.as_str(), pointer.as_str()))
                        .or_default();
                    c.0 += 1;
                    if text == answer {
                        c.2 += 1;
                    } else if text.len() >= MIN_TEXT_LEN
                        && answer.len() > text.len()
                        && answer.contains(text)
                    {
                        c.1 += 1;
                    }
                }
            }
        }
    }
    // An answer field some request field sends verbatim (nearly) every time is an echo of
    // that field, not a rendering of another one.
    let echoed: BTreeSet<&str> = counts
        .iter()
        .filter(|(_, (total, _, same))| same * 10 >= total * 9)
        .map(|((field, _), _)| *field)
        .collect();
    let candidates: BTreeSet<(&str, &str)> = counts
        .iter()
        .filter(|((field, _), (_, wrapped, _))| {
            *wrapped >= MIN_PLAIN_TEXTS && !echoed.contains(field)
        })
        .map(|(key, _)| *key)
        .collect();
    if candidates.is_empty() {
        return None;
    }
    // Second pass: the pairs (text, answered string) of the candidates, in recorded order.
    let mut pairs: BTreeMap<(&str, &str), Vec<(&str, &str)>> = BTreeMap::new();
    for (o, body) in &bodies {
        for (pointer, sent) in &o.req_fields {
            let Some(text) = sent.as_str() else {
                continue;
            };
            for &(field, tf) in candidates.iter().filter(|(_, tf)| *tf == pointer) {
                if let Some(Value::String(answer)) = body.get(field) {
                    pairs
                        .entry((field, tf))
                        .or_default()
                        .push((text, answer.as_str()));
                }
            }
        }
    }
    let mut best: Option<(usize, TextRendering)> = None;
    for ((field, text_field), pairs) in &pairs {
        let Some((explained, mut rule)) = learn(pairs) else {
            continue;
        };
        rule.at = format!("/{}", field.replace('~', "~0").replace('/', "~1"));
        rule.text_field = (*text_field).to_string();
        if best.as_ref().is_none_or(|(n, _)| explained > *n) {
            best = Some((explained, rule));
        }
    }
    best.map(|(_, rule)| rule)
}

/// What a unit of text can be unknown as: a character, or the tokens of a sigil.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Unknown {
    Char(char),
    Sigil(char),
}

/// A learned rendering: of a character, or of a sigil's tokens (the parts its word joins).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Rendering {
    Char(String),
    Parts(Vec<String>),
}

/// Every non-word, non-space character may start a token; which do is learned.
fn any_sigil(_: char) -> bool {
    true
}

/// The rule the pairs bear out, with how many pairs it reproduces; `None` when it reproduces
/// fewer than 90% of them, or renders every text as itself.
fn learn(pairs: &[(&str, &str)]) -> Option<(usize, TextRendering)> {
    let (prefix, suffix) = affixes(pairs)?;
    let bodies: Vec<(Vec<TextUnit<'_>>, &str)> = pairs
        .iter()
        .filter_map(|(t, a)| {
            let body = a
                .strip_prefix(prefix.as_str())?
                .strip_suffix(suffix.as_str())?;
            Some((text_units(t, any_sigil), body))
        })
        .collect();
    let known = solve(&bodies);
    let mut rule = TextRendering {
        at: String::new(),
        text_field: String::new(),
        prefix,
        suffix,
        escapes: BTreeMap::new(),
        tokens: Vec::new(),
    };
    for (unknown, rendering) in known {
        match (unknown, rendering) {
            (Unknown::Char(c), Rendering::Char(r)) if r != c.to_string() => {
                rule.escapes.insert(c.to_string(), r);
            }
            (Unknown::Sigil(s), Rendering::Parts(parts)) if parts != identity_parts(s) => {
                rule.tokens.push(TokenRendering {
                    sigil: s.to_string(),
                    parts,
                });
            }
            _ => {}
        }
    }
    let trivial = rule.prefix.is_empty()
        && rule.suffix.is_empty()
        && rule.escapes.is_empty()
        && rule.tokens.is_empty();
    if trivial {
        return None;
    }
    let explained = pairs.iter().filter(|(t, a)| rule.render(t) == *a).count();
    let distinct: BTreeSet<&str> = pairs
        .iter()
        .filter(|(t, a)| rule.render(t) == *a)
        .map(|(t, _)| *t)
        .collect();
    (explained * 10 >= pairs.len() * 9 && distinct.len() >= MIN_PLAIN_TEXTS)
        .then_some((explained, rule))
}

/// The prefix and suffix most distinct texts are answered within verbatim (answer = prefix +
/// text + suffix), when at least [`MIN_PLAIN_TEXTS`] are; on a tie, the pair the longest
/// such text shows (the first on a tie). A text the answer holds with more around it (a
/// quote's preamble before the text) proposes affixes few other texts share.
fn affixes(pairs: &[(&str, &str)]) -> Option<(String, String)> {
    let mut tally: BTreeMap<(&str, &str), (BTreeSet<&str>, usize, usize)> = BTreeMap::new();
    for (i, (t, a)) in pairs.iter().enumerate() {
        if t.len() < MIN_TEXT_LEN {
            continue;
        }
        let Some(at) = a.find(t) else {
            continue;
        };
        let (prefix, suffix) = (&a[..at], &a[at + t.len()..]);
        let entry = tally
            .entry((prefix, suffix))
            .or_insert_with(|| (BTreeSet::new(), 0, i));
        entry.0.insert(t);
        entry.1 = entry.1.max(t.len());
    }
    let mut best: Option<((&str, &str), usize, usize, usize)> = None;
    for (affixes, (texts, longest, first)) in tally {
        let better = best.is_none_or(|(_, n, l, f)| {
            (texts.len(), longest, std::cmp::Reverse(first)) > (n, l, std::cmp::Reverse(f))
        });
        if better {
            best = Some((affixes, texts.len(), longest, first));
        }
    }
    let ((prefix, suffix), n, _, _) = best?;
    (n >= MIN_PLAIN_TEXTS).then(|| (prefix.to_string(), suffix.to_string()))
}

fn identity_parts(sigil: char) -> Vec<String> {
    vec![sigil.to_string(), String::new()]
}

fn unknown_of(unit: &TextUnit<'_>) -> Unknown {
    match unit {
        TextUnit::Char(c) => Unknown::Char(*c),
        TextUnit::Token { sigil, .. } => Unknown::Sigil(*sigil),
    }
}

fn render_known(unit: &TextUnit<'_>, known: &HashMap<Unknown, Rendering>) -> Option<String> {
    match (unit, known.get(&unknown_of(unit))?) {
        (TextUnit::Char(_), Rendering::Char(r)) => Some(r.clone()),
        (TextUnit::Token { word, .. }, Rendering::Parts(parts)) => Some(parts.join(word)),
        _ => None,
    }
}

/// What one body showed of one unknown: its rendering, and for a token the word and the
/// piece of the body it rendered as (so a sigil's candidates can be scored on every sample).
type Votes<'t> = BTreeMap<Unknown, Vec<(Rendering, Option<(&'t str, String)>)>>;

/// The renderings the bodies teach, round by round (see the module documentation).
fn solve<'t>(bodies: &[(Vec<TextUnit<'t>>, &str)]) -> BTreeMap<Unknown, Rendering> {
    let mut known: HashMap<Unknown, Rendering> = HashMap::new();
    // A body that is its text verbatim renders each of its units as itself.
    let mut votes: Votes<'t> = BTreeMap::new();
    for (units, body) in bodies {
        let text: String = units.iter().map(unit_text).collect();
        if text == *body {
            for u in units {
                let vote = match u {
                    TextUnit::Char(c) => (Rendering::Char(c.to_string()), None),
                    TextUnit::Token { sigil, word } => (
                        Rendering::Parts(identity_parts(*sigil)),
                        Some((*word, format!("{sigil}{word}"))),
                    ),
                };
                votes.entry(unknown_of(u)).or_default().push(vote);
            }
        }
    }
    adopt(&mut known, votes);
    // A word character no verbatim body held is taken as itself: renderers escape markup,
    // not letters and digits, and every pair is checked against the finished rule anyway.
    for (units, _) in bodies {
        for u in units {
            if let TextUnit::Char(c) = u
                && (c.is_alphanumeric() || *c == '_')
            {
                known
                    .entry(Unknown::Char(*c))
                    .or_insert_with(|| Rendering::Char(c.to_string()));
            }
        }
    }
    loop {
        let mut votes: Votes<'t> = BTreeMap::new();
        for (units, body) in bodies {
            let open: BTreeSet<Unknown> = units
                .iter()
                .map(unknown_of)
                .filter(|u| !known.contains_key(u))
                .collect();
            let mut open = open.into_iter();
            let (Some(only), None) = (open.next(), open.next()) else {
                continue;
            };
            if let Some(vote) = solve_one(units, body, only, &known) {
                votes.entry(only).or_default().push(vote);
            }
        }
        if votes.is_empty() {
            break;
        }
        adopt(&mut known, votes);
    }
    known.into_iter().collect()
}

/// Each unknown takes the rendering that reproduces the most bodies' samples: for a
/// character, the one most bodies showed; for a sigil, the parts that render the most
/// samples' words as their pieces (a short word found inside the constant parts splits them
/// wrongly, and a longer word's parts still render it). The least rendering on a tie.
fn adopt(known: &mut HashMap<Unknown, Rendering>, votes: Votes<'_>) {
    for (u, samples) in votes {
        let candidates: BTreeSet<&Rendering> = samples.iter().map(|(r, _)| r).collect();
        let score = |cand: &Rendering| -> usize {
            samples
                .iter()
                .filter(|(r, sample)| match (cand, sample) {
                    (Rendering::Parts(parts), Some((word, piece))) => parts.join(word) == *piece,
                    _ => r == cand,
                })
                .count()
        };
        let mut best: Option<(&Rendering, usize)> = None;
        for cand in candidates {
            let n = score(cand);
            if best.is_none_or(|(_, m)| n > m) {
                best = Some((cand, n));
            }
        }
        if let Some((r, _)) = best {
            known.insert(u, r.clone());
        }
    }
}

fn unit_text(u: &TextUnit<'_>) -> String {
    match u {
        TextUnit::Char(c) => c.to_string(),
        TextUnit::Token { sigil, word } => format!("{sigil}{word}"),
    }
}

/// The rendering of `only` that makes `units` render as `body`, every other unit rendered as
/// `known` says; `None` when there is none (or, for a sigil, when it starts more than one
/// token here: the split between them is not determined).
fn solve_one<'t>(
    units: &[TextUnit<'t>],
    body: &str,
    only: Unknown,
    known: &HashMap<Unknown, Rendering>,
) -> Option<(Rendering, Option<(&'t str, String)>)> {
    let count = units.iter().filter(|u| unknown_of(u) == only).count();
    let known_len: usize = units
        .iter()
        .filter(|u| unknown_of(u) != only)
        .map(|u| render_known(u, known).map(|r| r.len()))
        .sum::<Option<usize>>()?;
    let left = body.len().checked_sub(known_len)?;
    match only {
        Unknown::Char(_) => {
            if left % count != 0 {
                return None;
            }
            let width = left / count;
            let mut pos = 0usize;
            let mut found: Option<&str> = None;
            for u in units {
                let piece = if unknown_of(u) == only {
                    let piece = body.get(pos..pos + width)?;
                    if found.is_some_and(|f| f != piece) {
                        return None;
                    }
                    found = Some(piece);
                    piece.to_string()
                } else {
                    let r = render_known(u, known)?;
                    if !body.get(pos..)?.starts_with(&r) {
                        return None;
                    }
                    r
                };
                pos += piece.len();
            }
            (pos == body.len())
                .then(|| (Rendering::Char(found.unwrap_or_default().to_string()), None))
        }
        Unknown::Sigil(_) => {
            if count != 1 {
                return None;
            }
            let at = units.iter().position(|u| unknown_of(u) == only)?;
            let TextUnit::Token { word, .. } = units[at] else {
                return None;
            };
            let mut pos = 0usize;
            for u in &units[..at] {
                let r = render_known(u, known)?;
                if !body.get(pos..)?.starts_with(&r) {
                    return None;
                }
                pos += r.len();
            }
            let piece = body.get(pos..pos + left)?;
            let mut end = pos + left;
            for u in &units[at + 1..] {
                let r = render_known(u, known)?;
                if !body.get(end..)?.starts_with(&r) {
                    return None;
                }
                end += r.len();
            }
            if end != body.len() {
                return None;
            }
            Some((
                Rendering::Parts(piece.split(word).map(str::to_string).collect()),
                Some((word, piece.to_string())),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs<'a>(list: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
        list.to_vec()
    }

    #[test]
    fn a_wrapped_text_with_escapes_and_tag_links_is_learned() {
        let p = pairs(&[
            ("hello there", "<p>hello there</p>"),
            ("good morning", "<p>good morning</p>"),
            ("see you soon", "<p>see you soon</p>"),
            ("it's me", "<p>it&#39;s me</p>"),
            (
                "#rust is fun",
                r#"<p><a href="/tags/rust">#rust</a> is fun</p>"#,
            ),
        ]);
        let (explained, rule) = learn(&p).expect("a rule");
        assert_eq!(explained, 5);
        assert_eq!(
            (rule.prefix.as_str(), rule.suffix.as_str()),
            ("<p>", "</p>")
        );
        assert_eq!(rule.escapes.get("'").map(String::as_str), Some("&#39;"));
        assert_eq!(
            rule.render("#go and it's #zig"),
            r#"<p><a href="/tags/go">#go</a> and it&#39;s <a href="/tags/zig">#zig</a></p>"#
        );
    }

    #[test]
    fn a_verbatim_echo_is_no_rendering() {
        let p = pairs(&[("hello", "hello"), ("there", "there"), ("again", "again")]);
        assert_eq!(learn(&p), None);
    }

    #[test]
    fn answers_the_rule_cannot_reproduce_for_a_tenth_of_the_texts_refute_it() {
        let p = pairs(&[
            ("one two", "<p>one two</p>"),
            ("three four", "<p>three four</p>"),
            ("five six", "<p>five six</p>"),
            ("seven", "<div>seven</div>"),
        ]);
        assert_eq!(learn(&p), None);
    }

    #[test]
    fn a_token_learned_from_a_long_word_renders_short_words_inside_its_constant() {
        // The word `a` also occurs in the constant parts (`<a href`): the long word decides.
        let p = pairs(&[
            ("one two", "<p>one two</p>"),
            ("three four", "<p>three four</p>"),
            ("five six", "<p>five six</p>"),
            (
                "#longword x",
                r#"<p><a href="/t/longword">#longword</a> x</p>"#,
            ),
            ("#a", r#"<p><a href="/t/a">#a</a></p>"#),
        ]);
        let (explained, rule) = learn(&p).expect("a rule");
        assert_eq!(explained, 5);
        assert_eq!(rule.render("#b"), r#"<p><a href="/t/b">#b</a></p>"#);
    }
}
