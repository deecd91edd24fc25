//! Loading a twin's `lua/` folder: handlers by file stem, `lua/lib/` modules for
//! `wraith.import`, `lua/routes.toml`, and the errors that name the file.
#![allow(clippy::unwrap_used)]

mod support;

use std::path::Path;

use serde_json::json;
use support::{FakeEnv, Req};
use wraith_engine::{HandlerBody, HandlerRequest};
use wraith_script::{ScriptError, ScriptOptions, load_lua_dir};

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

#[test]
fn loads_handlers_libraries_and_routes() {
    let dir = tempfile::tempdir().unwrap();
    let lua = dir.path();
    write(
        lua,
        "handlers/get_customer.lua",
        "local f = wraith.import('fmt') return { id = f.up(req.params.id) }",
    );
    write(
        lua,
        "handlers/list_orders.luau",
        "local n: number = 2 return { n = n }",
    );
    write(lua, "handlers/notes.txt", "not a handler");
    write(
        lua,
        "lib/fmt.lua",
        "return { up = function(s) return string.upper(s) end }",
    );
    write(lua, "lib/nested/deep.luau", "return {}");
    write(
        lua,
        "routes.toml",
        "schema_version = 1\n[[route]]\nmethod = \"GET\"\npath = \"/x\"\n",
    );
    let loaded = load_lua_dir(lua, ScriptOptions::default()).unwrap();
    assert_eq!(
        loaded.handlers.keys().collect::<Vec<_>>(),
        ["get_customer", "list_orders"]
    );
    assert_eq!(loaded.files["list_orders"], "lua/handlers/list_orders.luau");
    assert_eq!(loaded.modules, ["fmt", "nested/deep"]);
    assert_eq!(loaded.authored.len(), 1);
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);

    let req = Req::get("/customers/cus_1").param("id", "cus_1");
    let hr = HandlerRequest {
        handler: "get_customer",
        route: "GET /customers/:id",
        method: &req.method,
        path: &req.path,
        query: &req.query,
        headers: &req.headers,
        params: &req.params,
        body: &req.body,
        json: None,
    };
    let r = loaded.handlers["get_customer"]
        .call(&hr, &mut FakeEnv::new(&[]))
        .unwrap();
    assert_eq!(r.body, HandlerBody::Json(json!({"id": "CUS_1"})));
}

#[test]
fn a_missing_lua_folder_loads_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let loaded = load_lua_dir(&dir.path().join("lua"), ScriptOptions::default()).unwrap();
    assert!(loaded.handlers.is_empty() && loaded.authored.is_empty());
}

#[test]
fn a_handler_that_does_not_compile_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "handlers/get_x.lua", "return {");
    match load_lua_dir(dir.path(), ScriptOptions::default()) {
        Err(ScriptError::Compile { path, message }) => {
            assert!(path.ends_with("handlers/get_x.lua"));
            assert!(!message.is_empty());
        }
        other => panic!("expected a compile error, got {:?}", other.map(|l| l.files)),
    }
}

#[test]
fn the_same_stem_in_lua_and_luau_keeps_the_first_and_warns() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "handlers/get_x.lua", "return { from = 'lua' }");
    write(
        dir.path(),
        "handlers/get_x.luau",
        "return { from = 'luau' }",
    );
    let loaded = load_lua_dir(dir.path(), ScriptOptions::default()).unwrap();
    assert_eq!(loaded.files["get_x"], "lua/handlers/get_x.lua");
    assert_eq!(loaded.warnings.len(), 1);
    assert!(
        loaded.warnings[0].contains("get_x.luau"),
        "{:?}",
        loaded.warnings
    );
}

#[test]
fn an_invalid_routes_toml_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "routes.toml", "[[route]]\nmethod = \"GET\"\n");
    let Err(err) = load_lua_dir(dir.path(), ScriptOptions::default()) else {
        panic!("an invalid routes.toml must not load");
    };
    let text = err.to_string();
    assert!(
        text.contains("routes.toml") && text.contains("`path` is missing"),
        "{text}"
    );
}

#[test]
fn check_lua_dir_lists_every_file_that_does_not_compile() {
    let dir = tempfile::tempdir().unwrap();
    let lua = dir.path();
    write(lua, "handlers/get_customer.lua", "return { ok = true }");
    write(lua, "handlers/broken.lua", "if true then return {}");
    write(lua, "handlers/also_broken.luau", "local x: = 1");
    write(lua, "lib/fmt.lua", "return {}");
    let c = wraith_script::check_lua_dir(lua);
    assert_eq!(c.handlers, vec!["lua/handlers/get_customer.lua"]);
    assert_eq!(c.libraries, vec!["lua/lib/fmt.lua"]);
    let failed: Vec<String> = c
        .errors
        .iter()
        .map(|e| match e {
            ScriptError::Compile { path, .. } => {
                path.file_name().unwrap().to_string_lossy().into_owned()
            }
            other => panic!("{other}"),
        })
        .collect();
    assert_eq!(failed, vec!["also_broken.luau", "broken.lua"]);
}
