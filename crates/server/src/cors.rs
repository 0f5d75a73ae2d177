//! Browser clients: which origins may call the API (CORS), and the one log line per
//! request.
//!
//! A page on another origin (a chat UI, the Studio, a user's app) calls the server with
//! `fetch`; the browser first sends a preflight (`OPTIONS` with `Origin` and
//! `Access-Control-Request-Method`) and reads the answer's `Access-Control-Allow-*`
//! headers. Every route answers preflights (200), whether or not the origin is allowed:
//! an origin that is not allowed gets no `Access-Control-Allow-Origin`, so the browser
//! refuses the call. [`Cors::any`] is LangGraph's `http.cors` default of `langgraph dev`
//! (`allow_origins: ["*"]`); [`Cors::origins`] allows a list. Headers are not
//! restricted (the client's `content-type`, `x-api-key`, `authorization`, ... are all
//! allowed, as LangGraph's `allow_headers: ["*"]`); the headers clients read are exposed.
//!
//! The layers are tower-http's (`CorsLayer`): the same crate axum's own examples use, kept
//! with tower and hyper, and a header set that browsers test against.

use std::time::{Duration, Instant};

use axum::extract::Request;
use axum::http::{header, HeaderName, HeaderValue, Method};
use axum::middleware::Next;
use axum::response::Response;
use tower_http::cors::{AllowHeaders, AllowOrigin, CorsLayer, ExposeHeaders};

/// How long a browser may keep a preflight's answer (Starlette's default, as
/// `langgraph dev`).
const MAX_AGE: Duration = Duration::from_secs(600);

/// The response headers a browser page may read: `Content-Location` (a resumable
/// stream's run), `Location`, and the pagination and request headers.
const EXPOSED: [&str; 5] = [
    "content-location",
    "location",
    "x-pagination-total",
    "x-pagination-next",
    "x-request-id",
];

/// Which origins a browser page may call the API from (`ServerBuilder::cors`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cors {
    origins: Origins,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
enum Origins {
    /// No other origin (the default): preflights are answered, nothing is allowed.
    #[default]
    None,
    /// Every origin (`*`).
    Any,
    /// These origins (`scheme://host[:port]`, as browsers send `Origin`).
    List(Vec<String>),
}

impl Cors {
    /// No page on another origin may call the API (the default).
    pub fn none() -> Cors {
        Cors::default()
    }

    /// Every origin may (`Access-Control-Allow-Origin: *`): `langgraph dev`'s default,
    /// and `stategraph serve --demo`'s.
    pub fn any() -> Cors {
        Cors {
            origins: Origins::Any,
        }
    }

    /// These origins may (`http://localhost:3000`, `https://app.example.com`, ...): each
    /// as the browser sends it in `Origin`, without a trailing slash or path. A trailing
    /// `/` is dropped; `*` among them allows every origin.
    pub fn origins<I, S>(origins: I) -> Cors
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let list: Vec<String> = origins
            .into_iter()
            .map(|o| o.into().trim().trim_end_matches('/').to_owned())
            .filter(|o| !o.is_empty())
            .collect();
        let origins = if list.iter().any(|o| o == "*") {
            Origins::Any
        } else if list.is_empty() {
            Origins::None
        } else {
            Origins::List(list)
        };
        Cors { origins }
    }

    /// Whether a page on `origin` may call the API.
    pub fn allows(&self, origin: &str) -> bool {
        match &self.origins {
            Origins::None => false,
            Origins::Any => true,
            Origins::List(list) => list.iter().any(|o| o == origin),
        }
    }

    /// What `/info` and the start-up log say: `none`, `*` or the list.
    pub fn describe(&self) -> String {
        match &self.origins {
            Origins::None => "none".to_owned(),
            Origins::Any => "*".to_owned(),
            Origins::List(list) => list.join(", "),
        }
    }

    /// The tower layer answering preflights and adding the headers to every answer.
    pub(crate) fn layer(&self) -> CorsLayer {
        let allow = match &self.origins {
            Origins::Any => AllowOrigin::any(),
            Origins::None => AllowOrigin::list([]),
            Origins::List(list) => AllowOrigin::list(
                list.iter()
                    .filter_map(|o| HeaderValue::from_str(o).ok())
                    .collect::<Vec<_>>(),
            ),
        };
        CorsLayer::new()
            .allow_origin(allow)
            .allow_methods([
                Method::GET,
                Method::POST,
                Method::PUT,
                Method::PATCH,
                Method::DELETE,
                Method::OPTIONS,
            ])
            .allow_headers(AllowHeaders::mirror_request())
            .expose_headers(ExposeHeaders::list(EXPOSED.map(HeaderName::from_static)))
            .max_age(MAX_AGE)
    }
}

/// Logs every request at info once its answer's head is ready: method, path, status
/// and milliseconds (a stream's time is its first byte's).
pub(crate) async fn log_request(request: Request, next: Next) -> Response {
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let origin = request
        .headers()
        .get(header::ORIGIN)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let started = Instant::now();
    let response = next.run(request).await;
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    let status = response.status().as_u16();
    match origin {
        Some(origin) => tracing::info!(
            target: "stategraph_server::http",
            %method, %path, status, ms = format_args!("{ms:.1}"), %origin, "request"
        ),
        None => tracing::info!(
            target: "stategraph_server::http",
            %method, %path, status, ms = format_args!("{ms:.1}"), "request"
        ),
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_normalised() {
        let cors = Cors::origins(["http://a.test:3000/", " https://b.test ", ""]);
        assert!(cors.allows("http://a.test:3000"));
        assert!(cors.allows("https://b.test"));
        assert!(!cors.allows("http://c.test"));
        assert_eq!(cors.describe(), "http://a.test:3000, https://b.test");
        assert_eq!(Cors::origins(["http://a.test", "*"]), Cors::any());
        assert_eq!(Cors::origins(Vec::<String>::new()), Cors::none());
        assert!(!Cors::none().allows("http://a.test"));
        assert!(Cors::any().allows("http://anything.test"));
    }
}
