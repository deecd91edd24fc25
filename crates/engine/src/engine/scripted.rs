//! Handlers and authored routes inside dispatch: installing them into an [`Engine`], running a
//! bound handler, and answering an authored route. A child of the engine module so it shares
//! the dispatch types ([`Call`], [`Out`]) without widening their visibility.

use super::*;
use crate::handler::{
    AuthoredRoute, BindingErrors, HandlerBinding, HandlerEnv, HandlerError, HandlerOnError,
    HandlerRequest, Installed, NsEnv, ScriptReport, Scripts, bind_with_explicit, explicit_bindings,
    handler_params, shadowed_authored, template_param_names, unbound_warning, validate_explicit,
};

impl Engine {
    /// Install Lua (or any [`crate::Handler`]) handlers and the authored routes of
    /// `lua/routes.toml`. Call once, before serving. Authored routes a recorded route with the
    /// same method and path shadows stay inert; under strict fidelity neither handlers nor
    /// authored routes are served (strict answers only recorded exchanges). Every warning is
    /// also added to [`Engine::warnings`].
    ///
    /// An explicit binding (`[[binding]]`, or `handler` on an authored route) wins over the
    /// file-name convention for its route. One that names a missing handler or no recorded or
    /// declared authored route fails the whole install, before anything is changed.
    pub fn install_scripts(&mut self, scripts: Scripts) -> Result<ScriptReport, BindingErrors> {
        let names: Vec<&str> = scripts.handlers.keys().map(String::as_str).collect();
        let explicit = explicit_bindings(&scripts.authored, &scripts.bindings);
        let errors = validate_explicit(&self.model, &scripts.authored, &explicit, &names);
        if !errors.is_empty() {
            return Err(BindingErrors(errors));
        }
        let mut report = ScriptReport::default();
        let strict = self.opts.fidelity == Fidelity::Strict;
        let shadowed = shadowed_authored(&self.model, &scripts.authored);
        for name in &shadowed {
            report.warnings.push(format!(
                "authored route {name} (lua/routes.toml) is shadowed by the recorded route of the \
                 same method and path, which wins; remove the declaration"
            ));
        }
        report.shadowed = shadowed.clone();
        let mut authored: Vec<AuthoredRoute> = Vec::new();
        if strict && !scripts.authored.is_empty() {
            report.warnings.push(
                "authored routes (lua/routes.toml) are not served under strict fidelity, which \
                 answers only recorded exchanges"
                    .to_string(),
            );
        } else {
            for a in &scripts.authored {
                let name = a.name();
                if shadowed.contains(&name) {
                    continue;
                }
                match self.router.add_authored(&a.method, &a.path) {
                    Ok(_) => {
                        authored.push(a.clone());
                        report.authored.push(name);
                    }
                    Err(e) => report.warnings.push(format!(
                        "authored route {name} (lua/routes.toml) cannot be served: it conflicts \
                         with another route template ({e})"
                    )),
                }
            }
        }

        let mut shapes: Vec<(String, String, Option<StateOp>)> = self
            .model
            .routes
            .iter()
            .map(|r| (r.method.clone(), r.path.clone(), r.state_op))
            .collect();
        shapes.extend(
            authored
                .iter()
                .map(|a| (a.method.clone(), a.path.clone(), None)),
        );
        let bound = bind_with_explicit(&names, &shapes, &explicit);
        let n = self.model.routes.len();
        let mut by_route = Vec::with_capacity(bound.len());
        let mut binding_params = Vec::with_capacity(bound.len());
        for (i, b) in bound.iter().enumerate() {
            let (method, path, _) = &shapes[i];
            binding_params.push(match b {
                Some((_, true)) => explicit
                    .iter()
                    .find(|e| e.targets(method, path))
                    .map(|e| template_param_names(&e.path))
                    .unwrap_or_default(),
                _ => Vec::new(),
            });
            let slot = b.and_then(|(name, explicit)| {
                let h = scripts.handlers.get(name)?;
                report.bindings.push(HandlerBinding {
                    handler: name.to_string(),
                    route: self.router.info[i].name.clone(),
                    authored: i >= n,
                    explicit,
                });
                Some((name.to_string(), Arc::clone(h)))
            });
            by_route.push(slot);
        }
        for name in &names {
            if !report.bindings.iter().any(|b| b.handler == *name) {
                report.unbound.push((*name).to_string());
                report.warnings.push(unbound_warning(name, &shapes, &bound));
            }
        }
        if strict && !report.bindings.is_empty() {
            report.warnings.push(
                "Lua handlers do not run under strict fidelity, which answers only recorded \
                 exchanges"
                    .to_string(),
            );
        }
        self.warnings.extend(report.warnings.iter().cloned());
        self.scripts = Installed {
            any: by_route.iter().any(Option::is_some),
            by_route,
            binding_params,
            authored,
            on_error: scripts.on_error,
        };
        Ok(report)
    }

    /// Whether any route, recorded or authored, runs a Lua handler: such a request may take up
    /// to the handler's deadline, so the server runs it off its async workers.
    pub fn runs_handlers(&self) -> bool {
        self.scripts.any
    }

    /// Whether a handler is bound to any recorded route (what [`Engine::probe_handler`] can
    /// answer for), so a caller can skip probing entirely when none is.
    pub fn has_recorded_route_handlers(&self) -> bool {
        self.scripts
            .by_route
            .iter()
            .take(self.model.routes.len())
            .any(Option::is_some)
    }

    /// What the handler bound to the recorded route `req` matches would answer in `session`,
    /// without changing the session: the handler runs on a copy of the namespace (its writes,
    /// counter and clock readings are discarded) and the answer gets the same outbound passes
    /// as a served one. `None` when the request matches no recorded route, no handler is bound
    /// to it, the fidelity runs no handlers (strict, fuzzy), or the handler failed under
    /// `on_error = fallback`; a failure under `on_error = fail` is its 500 envelope. A session
    /// that does not exist yet and would pass `[serve.limits] max_namespaces` is the 503
    /// `namespace-unavailable` a request naming it gets.
    ///
    /// `wraith check` uses it to judge a handler's output on recorded requests that exact
    /// replay answers (a request whose exact URL was recorded is replayed verbatim, so the
    /// handler only serves the others).
    pub fn probe_handler(
        &self,
        session: Option<&str>,
        req: &Request,
    ) -> Result<Option<Response>, ControlError> {
        if self.opts.fidelity != Fidelity::Synth {
            return Ok(None);
        }
        // Matched as served: case-sensitively.
        let method = req.method.as_str();
        let Ok(path) = util::normalize_path(&req.path) else {
            return Ok(None);
        };
        let host = req.header("host");
        // As served: a HEAD no route declares is the GET route's, answered without a body.
        let matched = self.router.at(method, &path, host).or_else(|| {
            if method == "HEAD" {
                self.router.at("GET", &path, host)
            } else {
                None
            }
        });
        let Some(m) = matched else {
            return Ok(None);
        };
        if m.route >= self.model.routes.len() || self.scripts.handler(m.route).is_none() {
            return Ok(None);
        }
        let key = NsKey::from_header(session);
        let shared = self
            .registry
            .get_or_create(&key, || {
                self.make_namespace(key.clone(), self.lazy_settings(&key))
            })
            .map_err(|e| match e {
                NsError::Full(max) => Self::full_error(max),
            })?;
        // A copy: the session's own namespace must not see the probe's writes.
        let mut ns = shared.lock().clone();
        let ct = req.header("content-type");
        let principal = self.session_principal(&mut ns, req);
        let call = Call {
            req,
            principal,
            head: method == "HEAD",
            method: method.to_string(),
            query: util::parse_query(&req.query),
            body: util::body_as_json(ct, &req.body),
            path,
            m,
        };
        if let Some(b) = &call.body {
            ns.outbound.add_json(b);
        }
        for (_, v) in call.query.iter().chain(call.m.params.iter()) {
            ns.outbound.add(v);
        }
        let Some(mut out) = self.run_route_handler(&mut ns, &call) else {
            return Ok(None);
        };
        self.outbound_body(&mut ns, &call, &mut out);
        let head = call.head;
        Ok(Some(self.finish(out, req, head).0))
    }

    /// The route index's authored route, when it is one.
    pub(super) fn authored_route(&self, r: usize) -> Option<&AuthoredRoute> {
        r.checked_sub(self.model.routes.len())
            .and_then(|a| self.scripts.authored.get(a))
    }

    /// Answer an authored route: its handler, else its declared response (provenance
    /// `template`), else the 501 "no implementation".
    pub(super) fn dispatch_authored(
        &self,
        ns: &mut Namespace,
        call: &Call<'_>,
        route: &AuthoredRoute,
    ) -> Out {
        if let Some(out) = self.run_route_handler(ns, call) {
            return out;
        }
        let name = self.router.info[call.m.route].name.clone();
        // A bound handler that answered nothing failed under `on_error = "fallback"`.
        let failed = self
            .scripts
            .handler(call.m.route)
            .map(|(h, _)| h.to_string());
        if route.declares_response() {
            let status = route.status.unwrap_or(200);
            let mut out = Out::json(status, Value::Null, Provenance::Template, Some(name));
            match &route.response {
                Some(v) => {
                    out.sources.base = Some(FieldSource::Authored);
                    out.body = OutBody::Json(v.clone());
                }
                None => {
                    out.headers.clear();
                    out.body = OutBody::Empty;
                }
            }
            return out;
        }
        let body = match failed {
            Some(handler) => json!({
                "error": "authored route's handler failed",
                "wraith": {
                    "twin": self.opts.twin_name,
                    "route": name,
                    "handler": handler,
                    "hint": "the handler failed and [serve.lua] on_error = \"fallback\" has \
                             nothing to fall back to on an authored route: fix the handler \
                             (the serve log names the error) or declare a `response` for this \
                             route in lua/routes.toml",
                }
            }),
            None => json!({
                "error": "authored route has no implementation",
                "wraith": {
                    "twin": self.opts.twin_name,
                    "route": name,
                    "hint": "add a Lua handler under lua/handlers/ (see lua/handlers/README.md) \
                             or a `response` for this route in lua/routes.toml",
                }
            }),
        };
        Out::json(501, body, Provenance::Template, Some(name))
    }

    /// Run the handler bound to the matched route. `None` when none is bound, or when it failed
    /// under `on_error = fallback` (the caller answers as if there were no handler).
    pub(super) fn run_route_handler(&self, ns: &mut Namespace, call: &Call<'_>) -> Option<Out> {
        let (name, handler) = self.scripts.handler(call.m.route)?;
        let route_name = &self.router.info[call.m.route].name;
        let params = handler_params(&call.m.params, self.scripts.binding_params(call.m.route));
        let req = HandlerRequest {
            handler: name,
            route: route_name,
            method: &call.method,
            path: &call.path,
            query: &call.query,
            headers: &call.req.headers,
            params: &params,
            body: &call.req.body,
            json: call.body.as_ref(),
        };
        let mut env = NsEnv {
            ns,
            schema: &self.schema,
            model: &self.model,
            wall: &self.opts.wall_clock,
            gone: self.gone_records(),
            before: None,
            max_entities_per_type: self.opts.max_entities_per_type,
            max_state_bytes: self.opts.max_state_bytes,
            max_twin_state_bytes: self.opts.max_twin_state_bytes,
            limit_refusal: None,
        };
        let result = handler.call(&req, &mut env as &mut dyn HandlerEnv);
        if result.is_err() {
            env.roll_back();
        }
        match result {
            Ok(resp) => Some(handler_out(resp, route_name)),
            // The handler failed on the write the limits refused (not caught): the session
            // is full, not the handler broken, so the answer is the one a recorded route's
            // refused write gets, whatever `on_error` says.
            Err(e)
                if env
                    .limit_refusal
                    .as_deref()
                    .is_some_and(|m| e.message.contains(m)) =>
            {
                Some(Out::json(
                    507,
                    json!({ "error": "state-limit-exceeded", "message": e.message }),
                    Provenance::Miss,
                    Some(route_name.clone()),
                ))
            }
            Err(e) if self.scripts.on_error == HandlerOnError::Fail => {
                Some(handler_failure(name, &e, route_name))
            }
            Err(e) => {
                // The answer falls back to the route's own; the failure must still be seen.
                tracing::warn!(
                    handler = name,
                    route = route_name.as_str(),
                    "Lua handler failed, answering without it ([serve.lua] on_error = \"fallback\"): {}",
                    e.message
                );
                None
            }
        }
    }
}

/// A handler's answer as a dispatch result, provenance `handler`.
fn handler_out(resp: crate::handler::HandlerResponse, route: &str) -> Out {
    let mut out = Out::json(
        resp.status,
        Value::Null,
        Provenance::Handler,
        Some(route.to_string()),
    );
    out.headers = resp.headers;
    match resp.body {
        crate::handler::HandlerBody::Json(v) => {
            out.sources.base = Some(FieldSource::Handler);
            // Not exempt from the outbound policy: a handler may copy recorded records (and
            // their PII) out of the store, which the policy must still see.
            out.body = OutBody::Json(v);
        }
        crate::handler::HandlerBody::Bytes(b) => {
            out.sources.base = Some(FieldSource::Handler);
            out.body = OutBody::Bytes(b);
        }
        crate::handler::HandlerBody::Empty => out.body = OutBody::Empty,
    }
    out
}

/// The `on_error = fail` envelope. Provenance `template`: `handler` is reserved for a handler's
/// successful return; the body names the handler.
fn handler_failure(name: &str, e: &HandlerError, route: &str) -> Out {
    Out::json(
        500,
        json!({
            "error": {
                "type": "internal_error",
                "message": format!("Handler execution failed: {}", e.message),
                "handler": name,
            }
        }),
        // Not the handler's answer (`handler` is a successful return) nor a synthesized
        // content answer: one the engine invents outright, as its other error answers.
        Provenance::Miss,
        Some(route.to_string()),
    )
}
