//! The transport both clients share: one POST of a JSON body, error statuses read into
//! [`ModelError`]s, and a server-sent-events stream with the same timeout on every read.

use std::time::Duration;

use futures::{Stream, StreamExt};

use super::error::{ModelError, ModelErrorKind};
use super::sse::{Event, Reader};

/// The timeout when none is set: LangChain's clients wait 10 minutes by default (the
/// SDKs' `DEFAULT_TIMEOUT`).
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// The TLS setup of every client: rustls with the `ring` provider (no C build of
/// aws-lc, no process-wide default to install) and Mozilla's roots compiled in
/// (webpki-roots: the same on every machine, as the Python SDKs' certifi bundle), HTTP/1.1.
fn tls_config() -> Result<rustls::ClientConfig, rustls::Error> {
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let mut tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth();
    tls.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(tls)
}

/// An HTTP client for one provider.
#[derive(Clone, Debug)]
pub(crate) struct Transport {
    client: reqwest::Client,
    provider: &'static str,
    timeout: Duration,
}

impl Transport {
    /// A client whose connect and every read wait at most `timeout` (as httpx's timeout
    /// in the Python SDKs: a stream may last longer, as long as bytes keep coming).
    pub(crate) fn new(provider: &'static str, timeout: Duration) -> Result<Transport, ModelError> {
        let config = |e: String| ModelError::new(ModelErrorKind::Config, provider, e);
        let client = reqwest::Client::builder()
            .connect_timeout(timeout)
            .read_timeout(timeout)
            .tls_backend_preconfigured(tls_config().map_err(|e| config(e.to_string()))?)
            .build()
            .map_err(|e| config(e.to_string()))?;
        Ok(Transport {
            client,
            provider,
            timeout,
        })
    }

    /// POSTs `body` to `url` with `headers`; a 2xx response, or the error the server's
    /// status and body say.
    pub(crate) async fn post(
        &self,
        url: &str,
        headers: &[(&str, String)],
        body: &serde_json::Value,
        retries: u32,
    ) -> Result<reqwest::Response, ModelError> {
        let bytes = serde_json::to_vec(body).unwrap_or_default();
        let mut attempt = 0;
        let resp = loop {
            let mut req = self
                .client
                .post(url)
                .header("content-type", "application/json")
                .body(bytes.clone());
            for (name, value) in headers {
                req = req.header(*name, value);
            }
            match req.send().await {
                Ok(resp) => break resp,
                Err(e) => {
                    let err = self.transport_error(&e);
                    if err.kind != ModelErrorKind::Connection || attempt >= retries {
                        return Err(err);
                    }
                    tracing::debug!(error = %err, attempt, "model request: connection failed, sending again");
                    tokio::time::sleep(Duration::from_millis(100 << attempt.min(4))).await;
                    attempt += 1;
                }
            }
        };
        let status = resp.status();
        if status.is_success() {
            return Ok(resp);
        }
        let retry_after = retry_after(resp.headers());
        let text = resp.text().await.unwrap_or_default();
        let mut err = status_error(self.provider, status.as_u16(), &text);
        err.retry_after = retry_after;
        Err(err)
    }

    /// The whole body of a 2xx response, as JSON.
    pub(crate) async fn json(
        &self,
        resp: reqwest::Response,
    ) -> Result<serde_json::Value, ModelError> {
        let bytes = resp.bytes().await.map_err(|e| self.transport_error(&e))?;
        serde_json::from_slice(&bytes).map_err(|e| {
            let shown = String::from_utf8_lossy(&bytes[..bytes.len().min(200)]).into_owned();
            ModelError::new(
                ModelErrorKind::InvalidResponse,
                self.provider,
                format!("the answer is not JSON ({e}): {shown}"),
            )
        })
    }

    /// The events of a streamed 2xx response.
    pub(crate) fn events(
        &self,
        resp: reqwest::Response,
    ) -> impl Stream<Item = Result<Event, ModelError>> + Send + Unpin + 'static {
        let this = self.clone();
        let bytes = Box::pin(resp.bytes_stream());
        let state = (bytes, Reader::default(), this, false);
        Box::pin(futures::stream::unfold(
            state,
            |(mut bytes, mut reader, this, done)| async move {
                if done {
                    return None;
                }
                loop {
                    match reader.next_event() {
                        Ok(Some(event)) => return Some((Ok(event), (bytes, reader, this, false))),
                        Ok(None) => {}
                        Err(e) => {
                            let err = ModelError::new(
                                ModelErrorKind::InvalidResponse,
                                this.provider,
                                format!("bad event stream: UTF8 error: {}", e.0),
                            );
                            return Some((Err(err), (bytes, reader, this, true)));
                        }
                    }
                    match bytes.next().await {
                        Some(Ok(chunk)) => reader.push(&chunk),
                        Some(Err(e)) => {
                            let mut err = this.transport_error(&e);
                            if err.kind == ModelErrorKind::Connection {
                                err.kind = ModelErrorKind::StreamCut;
                            }
                            return Some((Err(err), (bytes, reader, this, true)));
                        }
                        None => return None,
                    }
                }
            },
        ))
    }

    /// A failure of the request itself (no HTTP status to read).
    fn transport_error(&self, e: &reqwest::Error) -> ModelError {
        let kind = if e.is_timeout() {
            ModelErrorKind::Timeout
        } else if e.is_builder() {
            ModelErrorKind::Config
        } else {
            ModelErrorKind::Connection
        };
        let mut text = e.to_string();
        let mut source = std::error::Error::source(e);
        while let Some(s) = source {
            text.push_str(": ");
            text.push_str(&s.to_string());
            source = s.source();
        }
        if kind == ModelErrorKind::Timeout {
            text = format!("no answer within {:?} ({text})", self.timeout);
        }
        ModelError::new(kind, self.provider, text)
    }
}

/// The error an error status and its body say. Both providers send
/// `{"error": {"type": ..., "message": ...}}` (Anthropic with `"type": "error"` beside).
pub(crate) fn status_error(provider: &'static str, status: u16, body: &str) -> ModelError {
    let parsed: Option<serde_json::Value> = serde_json::from_str(body).ok();
    let error = parsed.as_ref().and_then(|v| v.get("error"));
    let field = |k: &str| {
        error
            .and_then(|e| e.get(k))
            .and_then(|t| t.as_str())
            .map(str::to_owned)
    };
    let error_type = field("type").or_else(|| field("code"));
    let message = field("message")
        .or_else(|| error.and_then(|e| e.as_str()).map(str::to_owned))
        .unwrap_or_else(|| {
            let body = body.trim();
            if body.is_empty() {
                "(empty body)".to_owned()
            } else {
                body.chars().take(300).collect()
            }
        });
    let mut kind = ModelErrorKind::from_status(status);
    if error_type.as_deref() == Some("overloaded_error") {
        kind = ModelErrorKind::Server;
    }
    ModelError {
        kind,
        provider,
        status: Some(status),
        error_type,
        message,
        retry_after: None,
    }
}

/// The wait a response asks for: `retry-after-ms` (milliseconds, as OpenAI sends), else
/// `Retry-After` in seconds, else `Retry-After` as an HTTP date (the time until then; none
/// when it has passed), as the providers' Python SDKs read them.
fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    retry_after_at(headers, std::time::SystemTime::now())
}

/// [`retry_after`] with the present time given (a date is read against it).
fn retry_after_at(
    headers: &reqwest::header::HeaderMap,
    now: std::time::SystemTime,
) -> Option<Duration> {
    let read = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|n| n.is_finite() && *n >= 0.0)
    };
    if let Some(ms) = read("retry-after-ms") {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    if let Some(secs) = read("retry-after") {
        return Some(Duration::from_secs_f64(secs));
    }
    let date = headers.get("retry-after")?.to_str().ok()?;
    let at = httpdate::parse_http_date(date.trim()).ok()?;
    at.duration_since(now).ok().filter(|d| !d.is_zero())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_and_anthropic_error_bodies_read() {
        let e = status_error(
            "openai",
            401,
            r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}"#,
        );
        assert_eq!(e.kind, ModelErrorKind::Authentication);
        assert_eq!(e.error_type.as_deref(), Some("invalid_request_error"));
        assert_eq!(e.message, "Incorrect API key provided");
        let e = status_error(
            "anthropic",
            529,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        );
        assert_eq!(e.kind, ModelErrorKind::Server);
        let e = status_error("openai", 502, "<html>bad gateway</html>");
        assert_eq!(e.kind, ModelErrorKind::Server);
        assert_eq!(e.message, "<html>bad gateway</html>");
    }

    #[test]
    fn retry_after_reads_seconds_and_milliseconds() {
        let mut h = reqwest::header::HeaderMap::new();
        h.insert("retry-after", "3".parse().expect("header"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(3)));
        h.insert("retry-after-ms", "1500".parse().expect("header"));
        assert_eq!(retry_after(&h), Some(Duration::from_millis(1500)));
        let mut h = reqwest::header::HeaderMap::new();
        h.insert(
            "retry-after",
            "Wed, 21 Oct 2015 07:28:00 GMT".parse().expect("header"),
        );
        assert_eq!(
            retry_after(&h),
            None,
            "a date that has passed asks for no wait"
        );
        let now = httpdate::parse_http_date("Wed, 21 Oct 2015 07:27:55 GMT").expect("date");
        assert_eq!(retry_after_at(&h, now), Some(Duration::from_secs(5)));
        h.insert("retry-after", "soon".parse().expect("header"));
        assert_eq!(retry_after_at(&h, now), None, "neither seconds nor a date");
    }
}
