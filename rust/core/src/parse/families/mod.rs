//! The built-in parser families, one module each. A family's `register`
//! gives the registry its vLLM names, what it needs from the vocabulary, its
//! structural-tag model and its parser factories; adding a family is one
//! module and its name in the list below.

use super::Registry;

macro_rules! families {
    ($($family:ident),* $(,)?) => {
        $(mod $family;)*

        /// Every built-in family, into `registry`.
        pub(super) fn register(registry: &mut Registry) {
            $($family::register(registry);)*
            response_template::register(registry);
        }
    };
}

families!(
    apertus,
    beam,
    cohere,
    deepseek,
    dsml,
    dots,
    ernie45,
    functiongemma,
    gemma4,
    gigachat3,
    harmony,
    glm47,
    granite,
    granite4,
    granite_20b_fc,
    hermes,
    holo2,
    hunyuan,
    hunyuan_a13b,
    inkling,
    internlm,
    jamba,
    k2_horizon,
    kimi_k2,
    kimi_k3,
    lfm2,
    ling3,
    llama3_json,
    longcat,
    minimax_append_think,
    mimo,
    minicpm5,
    minicpmv,
    minimax_m2,
    minimax_m3,
    mistral,
    muse,
    nemotron_v3,
    olmo3,
    phi4_mini,
    plamo3,
    poolside,
    pythonic,
    qwen3,
    seed_oss,
    step3,
    step3p5,
    xlam
);

// The response-template parsers (`hf`), which `ParserSpec` builds as one
// unified parser.
pub mod response_template;

// Helpers of the families above.
mod deepseek_stream;
mod pythonic_repair;
mod qwen3_args;

#[cfg(test)]
mod tag_models_tests;
