//! Exporting the runs' spans over OTLP (cargo feature `otel`): one call sets up a
//! `tracing` subscriber whose `tracing-opentelemetry` layer sends every span to an
//! OpenTelemetry collector (or any OTLP receiver: Jaeger, Phoenix, Langfuse, ...).
//!
//! ```no_run
//! # fn main() -> Result<(), stategraph::otel::OtelError> {
//! // Endpoint from OTEL_EXPORTER_OTLP_ENDPOINT (default http://localhost:4318), service
//! // name from OTEL_SERVICE_NAME (default "stategraph"), as the OpenTelemetry SDKs read them.
//! let _traces = stategraph::otel::init()?; // flushes the last spans when dropped
//! // ... run graphs and agents ...
//! # Ok(()) }
//! ```
//!
//! What is traced is described in the README's "Traces (OpenTelemetry)": a span per run
//! (`invoke_agent {name}` / `invoke_workflow {name}`), per task, per model call
//! (`chat {model}`) and per tool call (`execute_tool {tool}`), after the GenAI semantic
//! conventions. Message content is left out unless asked:
//! [`Otel::capture_content`](crate::otel::Otel::capture_content),
//! [`set_capture_content`](crate::spans::set_capture_content), or
//! `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`.
//!
//! The crates: `opentelemetry` / `opentelemetry_sdk` / `opentelemetry-otlp` 0.33 (the
//! OpenTelemetry project's own Rust SDK and exporter) and `tracing-opentelemetry` 0.34
//! (tokio-rs's bridge, built against exactly that `opentelemetry`): the only maintained way
//! from `tracing` spans, which the runtime already emits, to OTLP. The exporter speaks
//! OTLP over HTTP with protobuf (`http/protobuf`, the SDKs' default) through a blocking
//! `reqwest` client on the batch processor's own thread, so no async runtime is needed
//! and no gRPC stack (`tonic`) is built; set `OTEL_EXPORTER_OTLP_PROTOCOL` to
//! `http/protobuf` or leave it unset (`grpc` is refused with
//! [`OtelError::Protocol`](crate::otel::OtelError::Protocol)).

use opentelemetry::trace::TracerProvider as _;
use opentelemetry::KeyValue;
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::trace::{SdkTracerProvider, Tracer};
use opentelemetry_sdk::Resource;
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{Layer, Registry};

pub use crate::spans::{captures_content, set_capture_content, CAPTURE_CONTENT_ENV};

/// Why the exporter could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum OtelError {
    /// The OTLP exporter could not be built (a bad endpoint, ...).
    #[error("OTLP exporter: {0}")]
    Exporter(String),
    /// `OTEL_EXPORTER_OTLP_PROTOCOL` names a protocol this build does not speak.
    #[error("OTLP protocol {0:?} is not supported: use http/protobuf")]
    Protocol(String),
    /// A global `tracing` subscriber is already set ([`Otel::layer`] composes with it).
    #[error("a global tracing subscriber is already set: {0}")]
    Subscriber(String),
}

/// Exports the spans with the defaults and the OpenTelemetry environment variables
/// (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`,
/// `OTEL_SERVICE_NAME`, `OTEL_EXPORTER_OTLP_HEADERS`): [`Otel::new`]`.install()`.
pub fn init() -> Result<OtelGuard, OtelError> {
    Otel::new().install()
}

/// The OTLP export's options (builder style); [`Otel::install`] sets it up.
#[derive(Clone, Debug, Default)]
#[must_use]
pub struct Otel {
    endpoint: Option<String>,
    service_name: Option<String>,
    capture_content: Option<bool>,
    level: Option<LevelFilter>,
}

impl Otel {
    /// The defaults: endpoint and service name from the environment.
    pub fn new() -> Otel {
        Otel::default()
    }

    /// The receiver's base URL, as `OTEL_EXPORTER_OTLP_ENDPOINT` gives it
    /// (`http://127.0.0.1:4318`): spans go to `{endpoint}/v1/traces`. Without it the
    /// environment decides (default `http://localhost:4318`).
    pub fn endpoint(mut self, endpoint: impl Into<String>) -> Otel {
        self.endpoint = Some(endpoint.into());
        self
    }

    /// The `service.name` of the resource (default: `OTEL_SERVICE_NAME`, else
    /// `stategraph`).
    pub fn service_name(mut self, name: impl Into<String>) -> Otel {
        self.service_name = Some(name.into());
        self
    }

    /// Records message content on the spans (see [`set_capture_content`]); off unless
    /// asked, here or by the environment.
    pub fn capture_content(mut self, on: bool) -> Otel {
        self.capture_content = Some(on);
        self
    }

    /// The most verbose spans exported (default `INFO`: every span of this crate, and
    /// those of other crates at `INFO` or above).
    pub fn level(mut self, level: LevelFilter) -> Otel {
        self.level = Some(level);
        self
    }

    /// Installs a global `tracing` subscriber that exports the spans. Keep the guard for as
    /// long as spans should be exported: dropping it sends those not sent yet.
    pub fn install(self) -> Result<OtelGuard, OtelError> {
        let (layer, guard) = self.layer::<Registry>()?;
        tracing_subscriber::registry()
            .with(layer)
            .try_init()
            .map_err(|e| OtelError::Subscriber(e.to_string()))?;
        Ok(guard)
    }

    /// The exporting layer, for a subscriber of your own (beside a `fmt` layer, say), and
    /// the guard that flushes it when dropped.
    pub fn layer<S>(self) -> Result<(OtelLayer<S>, OtelGuard), OtelError>
    where
        S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    {
        if let Some(on) = self.capture_content {
            set_capture_content(on);
        }
        if let Ok(p) = std::env::var("OTEL_EXPORTER_OTLP_PROTOCOL") {
            if !p.trim().is_empty() && p.trim() != "http/protobuf" {
                return Err(OtelError::Protocol(p));
            }
        }
        let provider = self.provider()?;
        let tracer = provider.tracer("stategraph");
        let layer = tracing_opentelemetry::layer()
            .with_tracer(tracer)
            .with_filter(self.level.unwrap_or(LevelFilter::INFO));
        Ok((layer, OtelGuard { provider }))
    }

    fn provider(&self) -> Result<SdkTracerProvider, OtelError> {
        let endpoint = self
            .endpoint
            .as_ref()
            .map(|e| format!("{}/v1/traces", e.trim_end_matches('/')));
        // With the `mcp` feature, the reqwest the exporter shares with rmcp is built with
        // no TLS provider of its own: it needs a process default before any client exists.
        #[cfg(feature = "mcp")]
        crate::tls::install_crypto_provider();
        // The blocking HTTP client is built (and later dropped) off any async runtime.
        let exporter = std::thread::spawn(move || {
            let mut builder = opentelemetry_otlp::SpanExporter::builder()
                .with_http()
                .with_protocol(Protocol::HttpBinary);
            if let Some(endpoint) = endpoint {
                builder = builder.with_endpoint(endpoint);
            }
            builder.build()
        })
        .join()
        .map_err(|_| OtelError::Exporter("the exporter's set-up panicked".into()))?
        .map_err(|e| OtelError::Exporter(e.to_string()))?;
        let service = self
            .service_name
            .clone()
            .or_else(|| std::env::var("OTEL_SERVICE_NAME").ok())
            .unwrap_or_else(|| "stategraph".to_owned());
        let resource = Resource::builder()
            .with_service_name(service)
            .with_attribute(KeyValue::new("telemetry.sdk.name", "stategraph"))
            .build();
        Ok(SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource)
            .build())
    }
}

/// The layer [`Otel::layer`] returns.
pub type OtelLayer<S> = tracing_subscriber::filter::Filtered<
    tracing_opentelemetry::OpenTelemetryLayer<S, Tracer>,
    LevelFilter,
    S,
>;

/// Keeps the export running; dropping it sends the spans not sent yet and stops it.
#[must_use = "dropping the guard stops the export"]
pub struct OtelGuard {
    provider: SdkTracerProvider,
}

impl OtelGuard {
    /// Sends the spans ended so far, waiting for the receiver's answer.
    pub fn flush(&self) -> Result<(), OtelError> {
        self.provider
            .force_flush()
            .map_err(|e| OtelError::Exporter(e.to_string()))
    }
}

impl std::fmt::Debug for OtelGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OtelGuard").finish_non_exhaustive()
    }
}

impl Drop for OtelGuard {
    fn drop(&mut self) {
        if let Err(e) = self.provider.shutdown() {
            eprintln!("stategraph::otel: exporting the last spans failed: {e}");
        }
    }
}
