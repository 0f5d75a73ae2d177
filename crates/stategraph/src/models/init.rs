//! [`init_chat_model`]: a chat model from `"provider:model"`, as LangChain's.

use std::sync::Arc;

use super::anthropic::ChatAnthropic;
use super::error::{ModelError, ModelErrorKind};
use super::openai::ChatOpenAI;
use crate::prebuilt::ChatModel;

/// Ollama's local server, the default when `OLLAMA_BASE_URL` is not set.
pub const OLLAMA_BASE_URL: &str = "http://127.0.0.1:11434";

/// The providers [`init_chat_model`] knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Provider {
    /// OpenAI (or any server at `OPENAI_BASE_URL`): [`ChatOpenAI`].
    OpenAI,
    /// Anthropic: [`ChatAnthropic`].
    Anthropic,
    /// Ollama's OpenAI-compatible `/v1` (at `OLLAMA_BASE_URL`): a [`ChatOpenAI`].
    Ollama,
}

impl Provider {
    /// The provider a LangChain-style name means (`"openai"`, `"anthropic"`, `"ollama"`).
    pub fn from_name(name: &str) -> Option<Provider> {
        match name.to_ascii_lowercase().as_str() {
            "openai" => Some(Provider::OpenAI),
            "anthropic" => Some(Provider::Anthropic),
            "ollama" => Some(Provider::Ollama),
            _ => None,
        }
    }

    /// The provider LangChain infers from a bare model name: `gpt-…`, `o1…`, `o3…`,
    /// `chatgpt…` are OpenAI's, `claude…` Anthropic's.
    pub fn infer(model: &str) -> Option<Provider> {
        let m = model.to_ascii_lowercase();
        if ["gpt-", "o1", "o3", "o4", "chatgpt", "text-davinci"]
            .iter()
            .any(|p| m.starts_with(p))
        {
            Some(Provider::OpenAI)
        } else if m.starts_with("claude") {
            Some(Provider::Anthropic)
        } else {
            None
        }
    }
}

/// A chat model from `"provider:model"` (`"openai:gpt-4o-mini"`,
/// `"anthropic:claude-sonnet-4-5"`, `"ollama:qwen2.5"`) or a bare model name whose
/// provider is clear (`"gpt-4o-mini"`, `"claude-sonnet-4-5"`), as LangChain's
/// `init_chat_model`. Keys and base URLs come from the environment: `OPENAI_API_KEY`,
/// `OPENAI_BASE_URL`, `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`, `OLLAMA_BASE_URL`
/// (Ollama's host; `/v1` is added). To set options first, use [`init_chat_client`].
pub fn init_chat_model(spec: &str) -> Result<Arc<dyn ChatModel>, ModelError> {
    Ok(init_chat_client(spec)?.into_model())
}

/// The concrete client [`init_chat_model`] makes, to set options on before use.
#[derive(Clone, Debug)]
pub enum ChatClient {
    /// OpenAI or Ollama.
    OpenAI(ChatOpenAI),
    /// Anthropic.
    Anthropic(ChatAnthropic),
}

impl ChatClient {
    /// The client as a [`ChatModel`] for an agent.
    pub fn into_model(self) -> Arc<dyn ChatModel> {
        match self {
            ChatClient::OpenAI(m) => Arc::new(m),
            ChatClient::Anthropic(m) => Arc::new(m),
        }
    }
}

/// [`init_chat_model`]'s client before it is made a [`ChatModel`]: match on it to set
/// provider options.
pub fn init_chat_client(spec: &str) -> Result<ChatClient, ModelError> {
    let bad = |why: String| ModelError::new(ModelErrorKind::Config, "model", why);
    let (provider, model) = match spec.split_once(':') {
        Some((p, m)) => {
            let provider = Provider::from_name(p).ok_or_else(|| {
                bad(format!(
                    "unknown model provider {p:?} (known: openai, anthropic, ollama)"
                ))
            })?;
            (provider, m)
        }
        None => {
            let provider = Provider::infer(spec).ok_or_else(|| {
                bad(format!(
                    "cannot infer the provider of model {spec:?}: write \"provider:{spec}\""
                ))
            })?;
            (provider, spec)
        }
    };
    if model.is_empty() {
        return Err(bad(format!("no model name in {spec:?}")));
    }
    Ok(match provider {
        Provider::OpenAI => ChatClient::OpenAI(ChatOpenAI::new(model)),
        Provider::Anthropic => ChatClient::Anthropic(ChatAnthropic::new(model)),
        Provider::Ollama => {
            let host = std::env::var("OLLAMA_BASE_URL")
                .ok()
                .filter(|v| !v.is_empty())
                .unwrap_or_else(|| OLLAMA_BASE_URL.to_owned());
            let host = host.trim_end_matches('/');
            let base = if host.ends_with("/v1") {
                host.to_owned()
            } else {
                format!("{host}/v1")
            };
            ChatClient::OpenAI(ChatOpenAI::new(model).base_url(base))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_name_their_provider() {
        let ChatClient::OpenAI(o) = init_chat_client("openai:gpt-4o-mini").expect("openai") else {
            panic!("not OpenAI")
        };
        assert_eq!(o.model(), "gpt-4o-mini");
        let ChatClient::Anthropic(a) =
            init_chat_client("anthropic:claude-sonnet-4-5").expect("anthropic")
        else {
            panic!("not Anthropic")
        };
        assert_eq!(a.model(), "claude-sonnet-4-5");
        let ChatClient::OpenAI(o) = init_chat_client("ollama:qwen2.5").expect("ollama") else {
            panic!("not OpenAI-compatible")
        };
        assert!(format!("{o:?}").contains("/v1\""), "{o:?}");
        assert!(matches!(
            init_chat_client("claude-3-5-haiku"),
            Ok(ChatClient::Anthropic(_))
        ));
        let e = init_chat_client("mystery:model").expect_err("unknown");
        assert_eq!(e.kind, ModelErrorKind::Config);
        assert!(init_chat_model("llama3").is_err());
    }
}
