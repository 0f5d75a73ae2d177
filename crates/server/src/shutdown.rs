//! The shutdown signal [`crate::Server::serve`] waits for, from Ctrl-C or SIGTERM: what
//! every program serving graphs would otherwise write itself.

use tokio::sync::watch;

/// A shutdown signal for [`crate::Server::serve`] that becomes true on Ctrl-C, or on
/// SIGTERM on Unix (what `docker stop` and Kubernetes send). Call it inside the Tokio
/// runtime: it spawns the task that waits for the signal.
///
/// ```no_run
/// # async fn demo(server: stategraph_server::Server, listener: tokio::net::TcpListener) -> stategraph_server::Result<()> {
/// server.serve(listener, stategraph_server::shutdown_signal()).await
/// # }
/// ```
pub fn shutdown_signal() -> watch::Receiver<bool> {
    let (stop, shutdown) = watch::channel(false);
    tokio::spawn(async move {
        terminated().await;
        let _ = stop.send(true);
    });
    shutdown
}

/// Resolves on Ctrl-C, or on SIGTERM on Unix.
async fn terminated() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

/// Resolves once `shutdown` is true (never, when its sender is gone).
pub(crate) async fn stopped(shutdown: &mut watch::Receiver<bool>) {
    while !*shutdown.borrow() {
        if shutdown.changed().await.is_err() {
            // The sender is gone: nobody can ask to stop; wait forever.
            futures::future::pending::<()>().await;
        }
    }
}
