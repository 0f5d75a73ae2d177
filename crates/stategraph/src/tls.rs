//! The process's TLS crypto provider. The reqwest that rmcp brings (feature `mcp`) is built
//! without a provider of its own, so that no C build of aws-lc is needed; it then needs a
//! process default before any client exists. Used by the MCP sessions and, when `mcp` is
//! on, by the OTLP exporter of `otel`, which shares that reqwest. (The model clients'
//! reqwest carries its own `ring` provider.)

/// Installs rustls' `ring` provider as the process default unless one is installed.
pub(crate) fn install_crypto_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Another thread may install one first: either is fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}
