//! The shape of vLLM 0.33.0's `ChatCompletionMessageParam` as pydantic
//! builds it (openai 3.60.0's TypedDicts, vLLM's custom message and
//! parts, openai_harmony's `Message`), written as data: field order,
//! optionality and member order are what decide which errors a bad message
//! gets and which member a good one becomes. Every TypedDict allows extra
//! keys; `tests/reference/message_union/schema.txt` is the dump this mirrors.

/// A pydantic core schema, reduced to what these types use.
pub(super) enum Ty {
    Str,
    Int,
    Float,
    Bool,
    Any,
    /// `Literal[...]` of strings.
    Literal(&'static [&'static str]),
    /// `is-instance` of a Python class no JSON value is.
    Instance(&'static str),
    /// A str `Enum` (harmony's `Role`), reported as `enum`.
    Enum(&'static [&'static str]),
    Nullable(&'static Ty),
    /// A smart-mode union, members in order.
    Union(&'static [&'static Ty]),
    /// `Iterable[...]`: only iterability is checked up front; items are
    /// validated when the iterator is consumed.
    Generator(&'static Ty),
    List(&'static Ty),
    /// `dict[str, V]`.
    Dict(&'static Ty),
    TypedDict(&'static Class),
    /// A pydantic model (validated with `from_attributes`).
    Model(&'static Class),
}

pub(super) struct Class {
    pub name: &'static str,
    pub fields: &'static [Field],
}

pub(super) struct Field {
    pub name: &'static str,
    pub ty: &'static Ty,
    pub required: bool,
}

impl Ty {
    /// The segment pydantic adds to a location for this union member. Only
    /// class names survive vLLM's cleaning; the others contain brackets or
    /// are type names it drops.
    pub(super) fn tag(&self) -> &'static str {
        match self {
            Ty::Str => "str",
            Ty::Int => "int",
            Ty::Float => "float",
            Ty::Bool => "bool",
            Ty::Any => "any",
            Ty::Literal(_) => "literal[...]",
            Ty::Enum(_) => "enum[...]",
            Ty::Instance(_) => "is-instance[...]",
            Ty::Nullable(_) => "nullable[...]",
            Ty::Union(_) => "union[...]",
            Ty::Generator(_) => "generator[...]",
            Ty::List(_) => "list[...]",
            Ty::Dict(_) => "dict[...]",
            Ty::TypedDict(c) | Ty::Model(c) => c.name,
        }
    }
}

const fn req(name: &'static str, ty: &'static Ty) -> Field {
    Field { name, ty, required: true }
}

const fn opt(name: &'static str, ty: &'static Ty) -> Field {
    Field { name, ty, required: false }
}

static STR: Ty = Ty::Str;
static NULLABLE_STR: Ty = Ty::Nullable(&STR);

// Content parts.
static BREAKPOINT: Ty = Ty::TypedDict(&Class {
    name: "PromptCacheBreakpoint",
    fields: &[req("mode", &Ty::Literal(&["explicit"])), opt("ttl", &Ty::Literal(&["30m", "12h"]))],
});
static FILE_BREAKPOINT: Ty = Ty::TypedDict(&Class {
    name: "FilePromptCacheBreakpoint",
    fields: &[req("mode", &Ty::Literal(&["explicit"])), opt("ttl", &Ty::Literal(&["30m", "12h"]))],
});
static TEXT_PART: Ty = Ty::TypedDict(&Class {
    name: "ChatCompletionContentPartTextParam",
    fields: &[req("text", &STR), req("type", &Ty::Literal(&["text"])), opt("prompt_cache_breakpoint", &BREAKPOINT)],
});
static IMAGE_PART: Ty = Ty::TypedDict(&Class {
    name: "ChatCompletionContentPartImageParam",
    fields: &[
        req(
            "image_url",
            &Ty::TypedDict(&Class {
                name: "ImageURL",
                fields: &[req("url", &STR), opt("detail", &Ty::Literal(&["auto", "low", "high", "original"]))],
            }),
        ),
        req("type", &Ty::Literal(&["image_url"])),
        opt("prompt_cache_breakpoint", &BREAKPOINT),
    ],
});
static INPUT_AUDIO_PART: Ty = Ty::TypedDict(&Class {
    name: "ChatCompletionContentPartInputAudioParam",
    fields: &[
        req(
            "input_audio",
            &Ty::TypedDict(&Class {
                name: "InputAudio",
                fields: &[req("data", &STR), req("format", &Ty::Literal(&["wav", "mp3"]))],
            }),
        ),
        req("type", &Ty::Literal(&["input_audio"])),
        opt("prompt_cache_breakpoint", &BREAKPOINT),
    ],
});
static FILE_PART: Ty = Ty::TypedDict(&Class {
    name: "File",
    fields: &[
        req(
            "file",
            &Ty::TypedDict(&Class {
                name: "FileFile",
                fields: &[opt("file_data", &STR), opt("file_id", &STR), opt("filename", &STR)],
            }),
        ),
        req("type", &Ty::Literal(&["file"])),
        opt("prompt_cache_breakpoint", &FILE_BREAKPOINT),
    ],
});
static REFUSAL_PART: Ty = Ty::TypedDict(&Class {
    name: "ChatCompletionContentPartRefusalParam",
    fields: &[req("refusal", &STR), req("type", &Ty::Literal(&["refusal"]))],
});
static AUDIO_PART: Ty = Ty::TypedDict(&Class {
    name: "ChatCompletionContentPartAudioParam",
    fields: &[
        req("audio_url", &Ty::TypedDict(&Class { name: "AudioURL", fields: &[req("url", &STR)] })),
        req("type", &Ty::Literal(&["audio_url"])),
    ],
});
static VIDEO_PART: Ty = Ty::TypedDict(&Class {
    name: "ChatCompletionContentPartVideoParam",
    fields: &[
        req("video_url", &Ty::TypedDict(&Class { name: "VideoURL", fields: &[req("url", &STR)] })),
        req("type", &Ty::Literal(&["video_url"])),
    ],
});
static PIL_PART: Ty = Ty::TypedDict(&Class {
    name: "CustomChatCompletionContentPILImageParam",
    // `image_pil` wants a PIL image, which JSON cannot carry: only null passes.
    fields: &[
        opt(
            "image_pil",
            &Ty::Nullable(&Ty::Model(&Class { name: "PILImage", fields: &[req("image_pil", &Ty::Instance("Image"))] })),
        ),
        opt("uuid", &NULLABLE_STR),
    ],
});
static SIMPLE_IMAGE_PART: Ty = Ty::TypedDict(&Class {
    name: "CustomChatCompletionContentSimpleImageParam",
    fields: &[opt("image_url", &NULLABLE_STR), opt("uuid", &NULLABLE_STR)],
});
/// `str | dict[str, str | list[int | float]]`, nullable.
static EMBEDS: Ty =
    Ty::Nullable(&Ty::Union(&[&STR, &Ty::Dict(&Ty::Union(&[&STR, &Ty::List(&Ty::Union(&[&Ty::Int, &Ty::Float]))]))]));
static IMAGE_EMBEDS_PART: Ty = Ty::TypedDict(&Class {
    name: "ChatCompletionContentPartImageEmbedsParam",
    fields: &[opt("image_embeds", &EMBEDS), req("type", &Ty::Literal(&["image_embeds"])), opt("uuid", &NULLABLE_STR)],
});
static AUDIO_EMBEDS_PART: Ty = Ty::TypedDict(&Class {
    name: "ChatCompletionContentPartAudioEmbedsParam",
    fields: &[opt("audio_embeds", &EMBEDS), req("type", &Ty::Literal(&["audio_embeds"])), opt("uuid", &NULLABLE_STR)],
});
static VIDEO_EMBEDS_PART: Ty = Ty::TypedDict(&Class {
    name: "ChatCompletionContentPartVideoEmbedsParam",
    fields: &[
        opt("video_embeds", &EMBEDS),
        opt("audio_embeds", &EMBEDS),
        req("type", &Ty::Literal(&["video_embeds"])),
        opt("uuid", &NULLABLE_STR),
    ],
});
static PROMPT_EMBEDS_PART: Ty = Ty::TypedDict(&Class {
    name: "ChatCompletionContentPartPromptEmbedsParam",
    fields: &[req("data", &STR), req("type", &Ty::Literal(&["prompt_embeds"]))],
});
static SIMPLE_AUDIO_PART: Ty = Ty::TypedDict(&Class {
    name: "CustomChatCompletionContentSimpleAudioParam",
    fields: &[opt("audio_url", &NULLABLE_STR)],
});
static SIMPLE_VIDEO_PART: Ty = Ty::TypedDict(&Class {
    name: "CustomChatCompletionContentSimpleVideoParam",
    fields: &[opt("video_url", &NULLABLE_STR), opt("uuid", &NULLABLE_STR)],
});
static TOOL_REFERENCE_PART: Ty = Ty::TypedDict(&Class {
    name: "CustomChatCompletionContentToolReferenceParam",
    fields: &[opt("name", &STR), opt("type", &Ty::Literal(&["tool_reference"]))],
});
static THINK_PART: Ty = Ty::TypedDict(&Class {
    name: "CustomThinkCompletionContentParam",
    fields: &[req("thinking", &STR), opt("closed", &Ty::Bool), req("type", &Ty::Literal(&["thinking"]))],
});

static USER_PART: Ty = Ty::Union(&[&TEXT_PART, &IMAGE_PART, &INPUT_AUDIO_PART, &FILE_PART]);
static ASSISTANT_PART: Ty = Ty::Union(&[&TEXT_PART, &REFUSAL_PART]);
static CUSTOM_PART: Ty = Ty::Union(&[
    &TEXT_PART,
    &IMAGE_PART,
    &INPUT_AUDIO_PART,
    &FILE_PART,
    &AUDIO_PART,
    &VIDEO_PART,
    &REFUSAL_PART,
    &PIL_PART,
    &SIMPLE_IMAGE_PART,
    &IMAGE_EMBEDS_PART,
    &AUDIO_EMBEDS_PART,
    &VIDEO_EMBEDS_PART,
    &PROMPT_EMBEDS_PART,
    &SIMPLE_AUDIO_PART,
    &SIMPLE_VIDEO_PART,
    &TOOL_REFERENCE_PART,
    &STR,
    &THINK_PART,
]);

// Tool calls.
static FUNCTION_CALL: Ty = Ty::TypedDict(&Class {
    name: "ChatCompletionMessageFunctionToolCallParam",
    fields: &[
        req("id", &STR),
        req(
            "function",
            &Ty::TypedDict(&Class { name: "Function", fields: &[req("arguments", &STR), req("name", &STR)] }),
        ),
        req("type", &Ty::Literal(&["function"])),
    ],
});
static CUSTOM_CALL: Ty = Ty::TypedDict(&Class {
    name: "ChatCompletionMessageCustomToolCallParam",
    fields: &[
        req("id", &STR),
        req("custom", &Ty::TypedDict(&Class { name: "Custom", fields: &[req("input", &STR), req("name", &STR)] })),
        req("type", &Ty::Literal(&["custom"])),
    ],
});
static TOOL_CALL: Ty = Ty::Union(&[&FUNCTION_CALL, &CUSTOM_CALL]);

static TEXT_CONTENT: Ty = Ty::Union(&[&STR, &Ty::Generator(&TEXT_PART)]);
static USER_CONTENT: Ty = Ty::Union(&[&STR, &Ty::Generator(&USER_PART)]);
static ASSISTANT_CONTENT: Ty = Ty::Nullable(&Ty::Union(&[&STR, &Ty::Generator(&ASSISTANT_PART)]));

// The members, in the union's order.
static DEVELOPER: Ty = Ty::TypedDict(&Class {
    name: "ChatCompletionDeveloperMessageParam",
    fields: &[req("content", &TEXT_CONTENT), req("role", &Ty::Literal(&["developer"])), opt("name", &STR)],
});
static SYSTEM: Ty = Ty::TypedDict(&Class {
    name: "ChatCompletionSystemMessageParam",
    fields: &[req("content", &TEXT_CONTENT), req("role", &Ty::Literal(&["system"])), opt("name", &STR)],
});
static USER: Ty = Ty::TypedDict(&Class {
    name: "ChatCompletionUserMessageParam",
    fields: &[req("content", &USER_CONTENT), req("role", &Ty::Literal(&["user"])), opt("name", &STR)],
});
static ASSISTANT: Ty = Ty::TypedDict(&Class {
    name: "ChatCompletionAssistantMessageParam",
    fields: &[
        req("role", &Ty::Literal(&["assistant"])),
        opt("audio", &Ty::Nullable(&Ty::TypedDict(&Class { name: "Audio", fields: &[req("id", &STR)] }))),
        opt("content", &ASSISTANT_CONTENT),
        opt(
            "function_call",
            &Ty::Nullable(&Ty::TypedDict(&Class {
                name: "FunctionCall",
                fields: &[req("arguments", &STR), req("name", &STR)],
            })),
        ),
        opt("name", &STR),
        opt("refusal", &NULLABLE_STR),
        opt("tool_calls", &Ty::Generator(&TOOL_CALL)),
    ],
});
static TOOL: Ty = Ty::TypedDict(&Class {
    name: "ChatCompletionToolMessageParam",
    fields: &[req("content", &TEXT_CONTENT), req("role", &Ty::Literal(&["tool"])), req("tool_call_id", &STR)],
});
static FUNCTION: Ty = Ty::TypedDict(&Class {
    name: "ChatCompletionFunctionMessageParam",
    fields: &[req("content", &NULLABLE_STR), req("name", &STR), req("role", &Ty::Literal(&["function"]))],
});
static FUNCTION_TOOL: Ty = Ty::TypedDict(&Class {
    name: "ChatCompletionFunctionToolParam",
    fields: &[
        req(
            "function",
            &Ty::TypedDict(&Class {
                name: "FunctionDefinition",
                fields: &[
                    req("name", &STR),
                    opt("description", &STR),
                    opt("parameters", &Ty::Dict(&Ty::Any)),
                    opt("strict", &Ty::Nullable(&Ty::Bool)),
                ],
            }),
        ),
        req("type", &Ty::Literal(&["function"])),
    ],
});
static CUSTOM: Ty = Ty::TypedDict(&Class {
    name: "CustomChatCompletionMessageParam",
    fields: &[
        req("role", &STR),
        opt("content", &Ty::Union(&[&STR, &Ty::List(&CUSTOM_PART)])),
        opt("name", &STR),
        opt("tool_call_id", &NULLABLE_STR),
        opt("tool_calls", &Ty::Nullable(&Ty::List(&FUNCTION_CALL))),
        opt("reasoning", &Ty::Nullable(&Ty::Union(&[&STR, &PROMPT_EMBEDS_PART]))),
        opt("tools", &Ty::Nullable(&Ty::List(&FUNCTION_TOOL))),
        opt("task", &NULLABLE_STR),
    ],
});
static HARMONY: Ty = Ty::Model(&Class {
    name: "Message",
    fields: &[
        req(
            "author",
            &Ty::Model(&Class {
                name: "Author",
                fields: &[
                    req("role", &Ty::Enum(&["user", "assistant", "system", "developer", "tool"])),
                    opt("name", &NULLABLE_STR),
                ],
            }),
        ),
        opt("content", &Ty::List(&Ty::Model(&Class { name: "Content", fields: &[] }))),
        opt("channel", &NULLABLE_STR),
        opt("recipient", &NULLABLE_STR),
        opt("content_type", &NULLABLE_STR),
    ],
});

/// The union's members, in its order.
pub(super) static MESSAGE: [&Ty; 8] = [&DEVELOPER, &SYSTEM, &USER, &ASSISTANT, &TOOL, &FUNCTION, &CUSTOM, &HARMONY];

/// The item type of a member's field that pydantic takes as a lazy
/// `Iterable` (content parts, tool calls), if that field is one.
pub(super) fn lazy_items(member: &'static Ty, field: &str) -> Option<&'static Ty> {
    let Ty::TypedDict(class) = member else { return None };
    generator_in(class.fields.iter().find(|f| f.name == field)?.ty)
}

fn generator_in(ty: &'static Ty) -> Option<&'static Ty> {
    match ty {
        Ty::Generator(item) => Some(item),
        Ty::Nullable(inner) => generator_in(inner),
        Ty::Union(members) => members.iter().find_map(|m| generator_in(m)),
        _ => None,
    }
}

/// The media parts vLLM's part parser validates again before reading their
/// URL, by `type`.
pub(super) fn media_part(kind: &str) -> Option<(&'static str, &'static Ty)> {
    let ty: &'static Ty = match kind {
        "image_url" => &IMAGE_PART,
        "audio_url" => &AUDIO_PART,
        "video_url" => &VIDEO_PART,
        _ => return None,
    };
    Some((ty.tag(), ty))
}
