//! `Derenderer::handle` on arbitrary bytes. The first input byte picks the
//! route, the core (plain, or Qwen3 reasoning + hermes + auto tools with
//! compact states) and the content type; the rest is the body. A reply of
//! 500 means a panic was caught (or an answer could not be encoded): a bug.

#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use derender_core::parse::ParserSpec;
use derender_core::{Derenderer, Model, Route, Settings};
use libfuzzer_sys::fuzz_target;

const ROUTES: [Route; 6] = [
    Route::ChatDerender,
    Route::CompletionDerender,
    Route::ChatRender,
    Route::CompletionRender,
    Route::Tokenize,
    Route::Detokenize,
];
const CONTENT_TYPES: [Option<&str>; 4] =
    [Some("application/json"), Some("application/json; charset=utf-8"), Some("text/plain"), None];

fn core(parsers: bool) -> Derenderer {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../python/derender/models/qwen3");
    let model = Model::load_dir(&dir).expect("the bundled model loads");
    let parser = if parsers {
        ParserSpec::resolve(Some("qwen3"), Some("hermes"), true, &model, &Default::default()).expect("parsers")
    } else {
        None
    };
    let settings = Settings {
        served_model_names: vec!["qwen3".into()],
        max_model_len: model.config_max_len.expect("a context length"),
        max_logprobs: 20,
        max_n_sequences: 16384,
        skip_model_name_validation: false,
        parser,
        default_chat_template_kwargs: Default::default(),
        chat_template: None,
        trust_request_chat_template: false,
        exclude_tools_when_tool_choice_none: false,
        stream_state: Default::default(),
    };
    Derenderer::new(model, settings).expect("derenderer")
}

fn cores() -> &'static [Derenderer; 2] {
    static CORES: OnceLock<[Derenderer; 2]> = OnceLock::new();
    CORES.get_or_init(|| [core(false), core(true)])
}

fuzz_target!(|data: &[u8]| {
    let Some((&head, body)) = data.split_first() else { return };
    let route = ROUTES[usize::from(head & 7) % ROUTES.len()];
    let core = &cores()[usize::from((head >> 3) & 1)];
    let content_type = CONTENT_TYPES[usize::from((head >> 4) & 3)];
    let reply = core.handle(route, content_type, None, body);
    assert_ne!(reply.status, 500, "{route:?}: {}", String::from_utf8_lossy(&reply.body));
    assert!(reply.status >= 200 && reply.status < 500, "status {}", reply.status);
});
