//! What can go wrong: xgrammar's own refusals, spelled as it raises them, and
//! the few things this port declines to reproduce.

/// Where in xgrammar 0.2.8's C++ an error is logged; it shows in the raised
/// text as `/project/cpp/<file>:<line>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RaisedAt {
    /// Schema parsing (`json_schema_converter.cc:4944`).
    SchemaParse,
    /// Conversion, which is where `$ref` targets are looked up and parsed
    /// (`json_schema_converter.cc:4950`).
    Conversion,
    /// A failed `XGRAMMAR_CHECK` at the given line of `json_schema_converter.cc`.
    Check(u32),
    /// The regex-to-EBNF converter (`regex_converter.cc:83`).
    Regex,
    /// xgrammar's EBNF parser, reading a converted regex (`grammar_parser.cc:820`).
    EbnfParser,
}

impl RaisedAt {
    fn location(self) -> String {
        match self {
            RaisedAt::SchemaParse => "json_schema_converter.cc:4944".to_string(),
            RaisedAt::Conversion => "json_schema_converter.cc:4950".to_string(),
            RaisedAt::Check(line) => format!("json_schema_converter.cc:{line}"),
            RaisedAt::Regex => "regex_converter.cc:83".to_string(),
            RaisedAt::EbnfParser => "grammar_parser.cc:820".to_string(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum XgrammarError {
    /// xgrammar refused the schema; the message is its own.
    #[error("{message}")]
    Rejected { at: RaisedAt, message: String },
    /// picojson's assertion when a keyword that must be text is not
    /// (`format`, `pattern`, a `required` entry); raised without a log prefix.
    #[error("\"type mismatch! call is<type>() before get<type>()\" && is<std::string>()")]
    NotAString,
    /// A schema feature xgrammar accepts but this port does not reproduce.
    #[error("unsupported by the xgrammar port: {0}")]
    Unsupported(String),
    /// Deeper than this port recurses (xgrammar itself has no limit).
    #[error("JSON schema nested deeper than the xgrammar port's limit of {0}")]
    TooDeep(usize),
}

impl XgrammarError {
    pub(super) fn parse(message: impl Into<String>) -> Self {
        XgrammarError::Rejected { at: RaisedAt::SchemaParse, message: message.into() }
    }

    /// The same refusal, met while a `$ref` target is read during conversion.
    pub(super) fn during_conversion(self) -> Self {
        match self {
            XgrammarError::Rejected { at: RaisedAt::SchemaParse, message } => {
                XgrammarError::Rejected { at: RaisedAt::Conversion, message }
            }
            other => other,
        }
    }

    /// The text of the `RuntimeError` xgrammar raises, given the server's
    /// local wall clock as `HH:MM:SS` (the log prefix carries it). vLLM then
    /// passes it through `sanitize_message` (the path becomes `<path>`, the
    /// trailing newline goes) and answers 500 `InternalServerError`.
    /// `None` for the port's own refusals, which xgrammar would not raise.
    pub fn raised_text(&self, clock: &str) -> Option<String> {
        match self {
            XgrammarError::Rejected { at, message } => {
                Some(format!("[{clock}] /project/cpp/{}: {message}\n", at.location()))
            }
            XgrammarError::NotAString => Some(self.to_string()),
            XgrammarError::Unsupported(_) | XgrammarError::TooDeep(_) => None,
        }
    }

    /// True when xgrammar itself would raise this error (as opposed to the
    /// port declining a schema xgrammar accepts).
    pub fn is_xgrammar_error(&self) -> bool {
        matches!(self, XgrammarError::Rejected { .. } | XgrammarError::NotAString)
    }
}
