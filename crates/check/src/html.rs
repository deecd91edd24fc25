//! The HTML report (`reports/check.html`): one self-contained file (inline CSS, no scripts, no
//! external assets) a person can open — the verdict, per-route score bars, the worst
//! divergences with their drift types and expected and actual side by side, the routes that
//! drifted between recording runs, and coverage.

use std::fmt::Write as _;

use serde_json::Value;

use crate::coverage::Coverage;
use crate::report::Report;

/// At most this many routes and divergence groups are drawn (the JSON report has all).
const MAX_ROWS: usize = 200;

/// At most this many characters of a route name or a divergence path are drawn, and
/// [`REASON_CHARS`] of a reason: recorded paths and keys can run to kilobytes each, and the
/// page is to stay a size a browser opens (the JSON report has them whole).
const NAME_CHARS: usize = 160;
/// See [`NAME_CHARS`].
const REASON_CHARS: usize = 1_000;

/// `s` cut to its first `max` characters, with how long it was (`/v1/aaa… (5006 characters)`):
/// its start keeps it recognisable.
fn cut(s: &str, max: usize) -> std::borrow::Cow<'_, str> {
    let chars = s.chars().count();
    if chars <= max {
        return s.into();
    }
    let start: String = s.chars().take(max).collect();
    format!("{start}… ({chars} characters)").into()
}

fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            _ => o.push(c),
        }
    }
    o
}

fn pretty(v: &Value) -> String {
    let s = serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string());
    if s.len() > 4000 {
        let mut cut = 4000;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        format!("{}\n… ({} more bytes)", &s[..cut], s.len() - cut)
    } else {
        s
    }
}

/// The closing row of a table cut at [`MAX_ROWS`] of `total` rows: how many more the JSON
/// report lists. Nothing when none were cut.
fn more_rows(h: &mut String, total: usize, columns: usize) {
    if total > MAX_ROWS {
        let _ = write!(
            h,
            "<tr><td colspan={columns} class=muted>… {} more in the JSON report</td></tr>",
            total - MAX_ROWS
        );
    }
}

fn pct(bp: u32) -> String {
    format!("{}.{:02}%", bp / 100, bp % 100)
}

fn bar_class(bp: u32) -> &'static str {
    if bp >= 9_900 {
        "good"
    } else if bp >= 9_000 {
        "fair"
    } else {
        "bad"
    }
}

const STYLE: &str = r#"
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:18px 28px}
header h1{margin:0;font-size:20px}
header .sub{opacity:.75;font-size:13px}
main{padding:18px 28px;max-width:1400px}
.verdict{display:inline-block;padding:3px 10px;border-radius:4px;font-weight:600;margin-left:8px}
.pass{background:#2e7d32;color:#fff}.fail{background:#c62828;color:#fff}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin:14px 0}
.card{background:#fff;border:1px solid #dde1e7;border-radius:6px;padding:10px 14px;min-width:150px}
.card .n{font-size:22px;font-weight:600}.card .l{font-size:12px;color:#5b6473}
section{background:#fff;border:1px solid #dde1e7;border-radius:6px;padding:12px 16px;margin:16px 0}
h2{font-size:16px;margin:4px 0 10px}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:4px 8px;border-bottom:1px solid #eef0f3;vertical-align:top}
th{font-size:12px;color:#5b6473;font-weight:600}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.bar{position:relative;background:#eef0f3;border-radius:3px;height:14px;min-width:160px}
.bar span{position:absolute;left:0;top:0;bottom:0;border-radius:3px}
.good span{background:#43a047}.fair span{background:#f9a825}.bad span{background:#e53935}
code,pre{font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
pre{margin:0;white-space:pre-wrap;word-break:break-all;max-height:260px;overflow:auto;background:#f6f7f9;padding:6px;border-radius:4px}
.cat{display:inline-block;padding:1px 6px;border-radius:3px;background:#eef0f3;font-size:12px}
.side{display:grid;grid-template-columns:1fr 1fr;gap:8px}
.side h3{font-size:12px;margin:0 0 2px;color:#5b6473}
.muted{color:#5b6473}
"#;

/// Render the report (and coverage, when given) as one HTML document.
pub fn render(report: &Report, coverage: Option<&Coverage>) -> String {
    let mut h = String::with_capacity(64 * 1024);
    let verdict = if report.passed {
        "<span class=\"verdict pass\">PASS</span>"
    } else {
        "<span class=\"verdict fail\">FAIL</span>"
    };
    let _ = write!(
        h,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>wraith check — {twin}</title><style>{STYLE}</style></head><body>\
         <header><h1>wraith check — {twin}{verdict}</h1><div class=\"sub\">mode {mode}{target} · report v{v}</div></header><main>",
        twin = esc(&report.twin),
        mode = esc(&report.mode),
        target = report
            .target
            .as_deref()
            .map(|t| format!(" · target {}", esc(t)))
            .unwrap_or_default(),
        v = report.report_version,
    );
    let _ = write!(h, "<div class=\"cards\">");
    card(
        &mut h,
        &pct(report.score_bp),
        &format!("score (required {})", pct(report.required_score_bp)),
    );
    card(
        &mut h,
        &pct(report.session_pass_rate_bp),
        &format!(
            "sessions passing {}/{} (required {})",
            report.sessions_passed,
            report.sessions_total,
            pct(report.required_session_pass_rate_bp)
        ),
    );
    card(
        &mut h,
        &format!("{}/{}", report.exchanges_passed, report.exchanges_total),
        "exchanges with no divergence",
    );
    card(&mut h, &report.divergence_count.to_string(), "divergences");
    card(
        &mut h,
        &report.replay_claims.to_string(),
        "answers with an exact-replay claim",
    );
    if let Some(f) = &report.freshness {
        let age = f.twin_age_seconds.map_or_else(
            || "age unknown".to_string(),
            |a| format!("{} days old", a / 86_400),
        );
        card(
            &mut h,
            f.status,
            &format!(
                "freshness ([freshness] max_age {}): {age}",
                f.max_age_seconds
                    .map_or_else(|| "unset".to_string(), |m| format!("{} days", m / 86_400))
            ),
        );
    }
    if let Some(ho) = &report.holdout {
        card(
            &mut h,
            &format!(
                "{} / {}",
                pct(ho.in_sample_score_bp),
                pct(ho.held_out_score_bp)
            ),
            &format!("in-sample / held-out (every K-th session, K = {})", ho.k),
        );
    }
    card(
        &mut h,
        &pct(report.ceiling.score_bp),
        &format!(
            "Ceiling: {}/{} exchanges passable by any deterministic twin",
            report.ceiling.passable, report.ceiling.exchanges
        ),
    );
    let _ = write!(h, "</div>");

    // Why failing exchanges failed, and what the recordings allow at best.
    let _ = write!(
        h,
        "<section><h2>Why exchanges failed</h2><p>Ceiling {} ({} method): {} lost to identical requests recorded with incompatible answers ({} group(s)), {} to routes the model never recorded.</p><table><tr><th>cause</th><th>failing exchanges</th><th>meaning</th></tr>",
        pct(report.ceiling.score_bp),
        esc(&report.ceiling.method),
        report.ceiling.lost_recordings_disagree,
        report.ceiling.disagreeing_groups,
        report.ceiling.lost_unrecorded_route,
    );
    if report.causes.is_empty() {
        let _ = write!(h, "<tr><td colspan=3 class=muted>none</td></tr>");
    }
    for c in crate::causes::Cause::ALL {
        if let Some(n) = report.causes.get(c.as_str()) {
            let _ = write!(
                h,
                "<tr><td><span class=cat>{}</span></td><td class=num>{n}</td><td>{}</td></tr>",
                c.as_str(),
                esc(c.meaning())
            );
        }
    }
    let _ = write!(h, "</table>");
    // Where the chains of `after_earlier_divergence` start: a session whose first failure
    // the recordings bound is not the twin's gap, one whose first failure is `twin` is.
    if !report.after_earlier_divergence_by_first_cause.is_empty() {
        let parts: Vec<String> = crate::causes::Cause::ALL
            .iter()
            .filter_map(|c| {
                report
                    .after_earlier_divergence_by_first_cause
                    .get(c.as_str())
                    .map(|n| format!("{n} after a <span class=cat>{}</span>", c.as_str()))
            })
            .collect();
        let _ = write!(
            h,
            "<p>The <span class=cat>after_earlier_divergence</span> exchanges by the cause of \
             their session's first failure: {}.</p>",
            parts.join(", ")
        );
    }
    let _ = write!(h, "</section>");

    // Categories and provenance.
    let _ = write!(
        h,
        "<section><h2>Divergences by category</h2><table><tr><th>category</th><th>count</th></tr>"
    );
    if report.categories.is_empty() {
        let _ = write!(h, "<tr><td colspan=2 class=muted>none</td></tr>");
    }
    for (c, n) in &report.categories {
        let _ = write!(
            h,
            "<tr><td><span class=cat>{}</span></td><td class=num>{n}</td></tr>",
            esc(c)
        );
    }
    let _ = write!(
        h,
        "</table><h2 style=\"margin-top:14px\">How the twin answered</h2><table><tr><th>provenance</th><th>answers</th></tr>"
    );
    for (p, n) in &report.provenance {
        let _ = write!(h, "<tr><td>{}</td><td class=num>{n}</td></tr>", esc(p));
    }
    let _ = write!(h, "</table></section>");

    // Dimensions and their gates; what [[diff.suppress]] removed.
    let _ = write!(
        h,
        "<section><h2>Dimensions</h2><table><tr><th>dimension</th><th>score</th><th>judged exchanges</th><th>required</th></tr>"
    );
    for (name, d) in &report.dimensions {
        let _ = write!(
            h,
            "<tr><td>{}</td><td class=num>{}</td><td class=num>{}/{}</td><td class=num>{}</td></tr>",
            esc(name),
            pct(d.score_bp),
            d.passed_exchanges,
            d.exchanges,
            d.required_bp.map(pct).unwrap_or_default()
        );
    }
    for f in &report.dimensions_failed {
        let _ = write!(
            h,
            "<tr><td colspan=4><span class=cat>FAIL</span> {}{} {} below {}</td></tr>",
            f.route
                .as_deref()
                .map(|r| format!("{} ", esc(&cut(r, NAME_CHARS))))
                .unwrap_or_default(),
            esc(f.dimension.as_str()),
            pct(f.score_bp),
            pct(f.required_bp)
        );
    }
    let _ = write!(h, "</table>");
    if report.suppressed_count > 0 {
        let _ = write!(
            h,
            "<p>{} divergence(s) removed by <code>[[diff.suppress]]</code> before scoring.</p>",
            report.suppressed_count
        );
        if !report.suppressed.is_empty() {
            let _ = write!(
                h,
                "<table><tr><th>route / path</th><th>category</th><th>where</th><th>reason</th></tr>"
            );
            for x in report.suppressed.iter().take(MAX_ROWS) {
                let _ = write!(
                    h,
                    "<tr><td>{}<br><code>{}</code></td><td><span class=cat>{}</span></td><td>{}/{}</td><td>{} (rule {})</td></tr>",
                    esc(&cut(&x.route, NAME_CHARS)),
                    esc(&cut(&x.path, NAME_CHARS)),
                    esc(x.category.as_str()),
                    esc(&x.session),
                    x.exchange,
                    esc(&cut(&x.reason, REASON_CHARS)),
                    x.rule
                );
            }
            more_rows(&mut h, report.suppressed.len(), 4);
            let _ = write!(h, "</table>");
        }
    }
    let _ = write!(h, "</section>");

    // Authored output: the fiction ratio and the handler answers unlike the recordings.
    let a = &report.authored;
    if a.served_answers + a.probed_answers + a.fixture_answers > 0
        || report.fiction.authored_answers > 0
    {
        let _ = write!(
            h,
            "<section><h2>Authored output</h2><p>{} of {} answers authored (handlers, fixtures): {} · {} handler answer(s) judged ({} served, {} probed), {} fixture answer(s) · {} deviation(s): {} unmarked, {} marked (policy {}){}</p><table><tr><th>route / path</th><th>rule</th><th>where</th><th>expected (recordings) · actual (handler or fixture)</th></tr>",
            report.fiction.authored_answers,
            report.fiction.answers,
            pct(report.fiction.ratio_bp),
            a.served_answers + a.probed_answers,
            a.served_answers,
            a.probed_answers,
            a.fixture_answers,
            a.deviations,
            a.unmarked,
            a.marked,
            a.deviation_policy.as_str(),
            if a.gate_passed {
                ""
            } else {
                " — <b>fails the run</b>"
            },
        );
        if report.authored_deviations.is_empty() {
            let _ = write!(
                h,
                "<tr><td colspan=4 class=muted>none — the handlers answer in the recordings' shape</td></tr>"
            );
        }
        for r in report.authored_deviations.iter().take(MAX_ROWS) {
            let d = &r.deviation;
            let _ = write!(
                h,
                "<tr><td><code>{}</code><br><code>{}</code><br><span class=muted>{}</span></td><td><span class=cat>{}</span><br><span class=muted>{}{}</span></td><td>{}/{} ({})</td><td><div class=side><div><h3>expected</h3><pre>{}</pre></div><div><h3>actual</h3><pre>{}</pre></div></div></td></tr>",
                esc(&cut(&d.route, NAME_CHARS)),
                esc(&cut(&d.path, NAME_CHARS)),
                esc(&cut(&d.reason, REASON_CHARS)),
                esc(d.rule.as_str()),
                esc(r.severity),
                d.declared_reason
                    .as_deref()
                    .map(|x| format!(": {}", esc(&cut(x, REASON_CHARS))))
                    .unwrap_or_default(),
                esc(&r.session),
                r.exchange,
                d.answer.as_str(),
                esc(&pretty(&d.expected)),
                esc(&pretty(&d.actual)),
            );
        }
        more_rows(&mut h, report.authored_deviations.len(), 4);
        let _ = write!(h, "</table></section>");
    }

    // Routes, worst first.
    let mut routes: Vec<_> = report.routes.iter().collect();
    routes.sort_by(|a, b| {
        a.score_bp
            .cmp(&b.score_bp)
            .then(b.exchanges.cmp(&a.exchanges))
            .then(a.route.cmp(&b.route))
    });
    let _ = write!(
        h,
        "<section><h2>Routes ({}) — worst first</h2><table><tr><th>route</th><th>score</th><th></th><th>passed</th><th>divergences</th><th>categories</th><th>causes</th></tr>",
        routes.len()
    );
    for r in routes.iter().take(MAX_ROWS) {
        let cats: Vec<String> = r
            .categories
            .iter()
            .map(|(c, n)| format!("{} {n}", esc(c)))
            .collect();
        let causes: Vec<String> = crate::causes::Cause::ALL
            .iter()
            .filter_map(|c| {
                r.causes
                    .get(c.as_str())
                    .map(|n| format!("{} {n}", c.as_str()))
            })
            .collect();
        let _ = write!(
            h,
            "<tr><td><code>{}</code></td><td class=num>{}</td><td><div class=\"bar {}\"><span style=\"width:{:.2}%\"></span></div></td><td class=num>{}/{}</td><td class=num>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&cut(&r.route, NAME_CHARS)),
            pct(r.score_bp),
            bar_class(r.score_bp),
            f64::from(r.score_bp) / 100.0,
            r.passed,
            r.exchanges,
            r.divergences,
            cats.join(", "),
            causes.join(", ")
        );
    }
    more_rows(&mut h, routes.len(), 7);
    let _ = write!(h, "</table></section>");

    // Worst divergences: the most frequent drift groups, expected and actual side by side.
    let _ = write!(
        h,
        "<section><h2>Worst divergences ({} groups, most frequent first)</h2>",
        report.drifts.len()
    );
    if report.drift_suppressed_count > 0 {
        let _ = write!(
            h,
            "<p>{} divergence(s) are drift accepted by <code>drift.toml</code> (marked <i>accepted</i>; still scored).</p>",
            report.drift_suppressed_count
        );
    }
    if !report.drift_warnings.is_empty() {
        let _ = write!(
            h,
            "<p><b>drift.toml problems</b> (those entries are not applied):</p><ul>"
        );
        for w in &report.drift_warnings {
            let _ = write!(h, "<li><code>{}</code></li>", esc(w));
        }
        let _ = write!(h, "</ul>");
    }
    let _ = write!(
        h,
        "<table><tr><th>route / path</th><th>category · drift type</th><th>count</th><th>expected (recording) · actual (twin)</th></tr>"
    );
    if report.drifts.is_empty() {
        let _ = write!(
            h,
            "<tr><td colspan=4 class=muted>none — every exchange matched</td></tr>"
        );
    }
    for d in report.drifts.iter().take(MAX_ROWS) {
        let _ = write!(
            h,
            "<tr><td><code>{}</code><br><code>{}</code><br><span class=muted>first at {} · {}</span></td><td><span class=cat>{}</span><br><span class=cat>{}</span>{}{}</td><td class=num>{}</td><td><div class=side><div><h3>expected</h3><pre>{}</pre></div><div><h3>actual</h3><pre>{}</pre></div></div></td></tr>",
            esc(&cut(&d.route, NAME_CHARS)),
            esc(&cut(&d.path, NAME_CHARS)),
            esc(&d.first_seen),
            esc(&d.drift_id),
            esc(d.category.as_str()),
            esc(d.drift_type.as_str()),
            d.reclassified_from
                .map(|t| format!(
                    "<br><span class=muted>reclassified from {}</span>",
                    esc(t.as_str())
                ))
                .unwrap_or_default(),
            if d.drift_suppressed {
                "<br><span class=muted><i>accepted</i> (drift.toml)</span>"
            } else {
                ""
            },
            d.count,
            esc(&pretty(&d.expected)),
            esc(&pretty(&d.actual)),
        );
    }
    more_rows(&mut h, report.drifts.len(), 4);
    let _ = write!(h, "</table></section>");

    // Sessions that failed.
    let failed: Vec<_> = report.sessions.iter().filter(|s| !s.passed).collect();
    let _ = write!(
        h,
        "<section><h2>Sessions — {} of {} failed</h2><table><tr><th>session</th><th>score</th><th>passed exchanges</th></tr>",
        failed.len(),
        report.sessions.len()
    );
    for s in failed.iter().take(MAX_ROWS) {
        let _ = write!(
            h,
            "<tr><td><code>{}</code></td><td class=num>{}</td><td class=num>{}/{}</td></tr>",
            esc(&s.session),
            pct(s.score_bp),
            s.passed_exchanges,
            s.exchanges
        );
    }
    more_rows(&mut h, failed.len(), 3);
    let _ = write!(h, "</table></section>");

    drifted_routes(&mut h, report, coverage);

    if let Some(c) = coverage {
        let _ = write!(h, "<section><h2>Coverage</h2><div class=cards>");
        card(
            &mut h,
            &pct(c.route_coverage_bp),
            &format!("routes exercised {}/{}", c.routes_exercised, c.routes_total),
        );
        card(
            &mut h,
            &c.routes_seen_once.len().to_string(),
            "routes seen only once",
        );
        card(
            &mut h,
            &c.entity_types_without_create.len().to_string(),
            "entity types without a create",
        );
        card(
            &mut h,
            &c.uncovered_requests.to_string(),
            "recorded requests with no route",
        );
        let _ = write!(
            h,
            "</div><table><tr><th>state op</th><th>routes</th><th>exercised</th><th>exchanges</th></tr>"
        );
        for (op, s) in &c.state_ops {
            let _ = write!(
                h,
                "<tr><td>{}</td><td class=num>{}</td><td class=num>{}</td><td class=num>{}</td></tr>",
                esc(op),
                s.routes,
                s.routes_exercised,
                s.exchanges
            );
        }
        let _ = write!(h, "</table>");
        if !c.entity_types_without_create.is_empty() {
            let total = c.entity_types_without_create.len();
            let _ = write!(
                h,
                "<p><b>Entity types without a create:</b> {}{}</p>",
                c.entity_types_without_create
                    .iter()
                    .take(MAX_ROWS)
                    .map(|s| esc(&cut(s, NAME_CHARS)))
                    .collect::<Vec<_>>()
                    .join(", "),
                if total > MAX_ROWS {
                    format!(" … {} more in the JSON report", total - MAX_ROWS)
                } else {
                    String::new()
                }
            );
        }
        let _ = write!(h, "</section>");
    }
    let _ = writeln!(h, "</main></body></html>");
    h
}

/// The routes that drifted between recording runs: with their findings from the model when the
/// coverage is at hand, else by name from the report's `freshness.drifted_routes`.
fn drifted_routes(h: &mut String, report: &Report, coverage: Option<&Coverage>) {
    let names: Vec<String> = match (coverage, &report.freshness) {
        (Some(c), _) => c.drifted_routes.iter().map(|r| r.route.clone()).collect(),
        (None, Some(f)) => f.drifted_routes.clone(),
        (None, None) => return,
    };
    let _ = write!(
        h,
        "<section><h2>Drift between recording runs — {} route(s)</h2>",
        names.len()
    );
    if let Some(f) = &report.freshness
        && let Some(share) = f.drift
    {
        let _ = write!(
            h,
            "<p>{:.1}% of {} routes drifted{}.</p>",
            share * 100.0,
            f.routes_total,
            f.max_drift
                .map(|m| format!(" ([freshness] max_drift {m})"))
                .unwrap_or_default()
        );
    }
    if names.is_empty() {
        let _ = write!(
            h,
            "<p class=muted>none — every route answers its newest recording run in the shape of its earlier runs</p></section>"
        );
        return;
    }
    let _ = write!(
        h,
        "<table><tr><th>route</th><th>finding</th><th>at</th><th>change</th><th>answers (earlier / newer)</th><th>since</th></tr>"
    );
    let findings = coverage.map(|c| &c.drifted_routes);
    for name in names.iter().take(MAX_ROWS) {
        let found = findings.and_then(|f| f.iter().find(|r| &r.route == name));
        match found {
            Some(r) => {
                for d in &r.drift {
                    let change = match (&d.earlier, &d.newer) {
                        (Some(e), Some(n)) => format!("{e} → {n}"),
                        _ => String::new(),
                    };
                    let _ = write!(
                        h,
                        "<tr><td><code>{}</code></td><td><span class=cat>{}</span></td><td><code>{}</code></td><td>{}</td><td class=num>{} / {}</td><td>{}</td></tr>",
                        esc(&cut(name, NAME_CHARS)),
                        esc(d.kind.as_str()),
                        esc(&cut(&d.at, NAME_CHARS)),
                        esc(&change),
                        d.earlier_answers,
                        d.newer_answers,
                        esc(&d.since)
                    );
                }
            }
            None => {
                let _ = write!(
                    h,
                    "<tr><td><code>{}</code></td><td colspan=5 class=muted>see <code>drift</code> in the model</td></tr>",
                    esc(&cut(name, NAME_CHARS))
                );
            }
        }
    }
    more_rows(h, names.len(), 6);
    let _ = write!(h, "</table></section>");
}

fn card(h: &mut String, n: &str, label: &str) {
    let _ = write!(
        h,
        "<div class=card><div class=n>{}</div><div class=l>{}</div></div>",
        esc(n),
        esc(label)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_text_is_cut_to_its_start_and_its_length() {
        assert_eq!(cut("GET /v1/items", 160), "GET /v1/items");
        assert_eq!(cut("héllo world", 5), "héllo… (11 characters)");
    }

    #[test]
    #[allow(clippy::unwrap_used)]
    fn a_long_list_of_entity_types_without_a_create_is_cut_like_every_table() {
        let report = crate::report::ReportBuilder::new(crate::report::Thresholds::default())
            .finish("t", "in_memory", None);
        let model: wraith_model::Model = serde_json::from_value(serde_json::json!({
            "base_url": "https://api.test", "diagnostics": [], "entity_types": {},
            "recorded_at": "2026-06-05T12:00:02Z", "routes": [], "schema_version": 1,
            "sessions": [], "tool_version": "0.1.0", "twin": "t"
        }))
        .unwrap();
        let mut coverage = crate::coverage::coverage("t", &model, &[]);
        coverage.entity_types_without_create = (0..400)
            .map(|i| format!("coll{i:03}{}", "x".repeat(3_000)))
            .collect();
        let page = render(&report, Some(&coverage));
        assert!(page.len() < 100_000, "{} bytes", page.len());
        assert!(page.contains("coll199xxx"), "the first names are drawn");
        assert!(!page.contains("coll200"), "past the cap none are");
        assert!(page.contains("(3007 characters)"), "each cut to its start");
        assert!(page.contains("200 more in the JSON report"));
    }

    #[test]
    fn html_escapes_everything_it_prints() {
        assert_eq!(
            esc("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}
