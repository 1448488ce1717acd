import CGtk
import CFetchedResultsModel

/// Runs the Dispatch main queue, and so `DispatchQueue.main.async` blocks and `@MainActor`
/// work, inside the GLib main loop.
///
/// `g_application_run` does not drain the main queue: without this, the work an
/// `ObjectContext` schedules on its queue (processing pending changes, merging another
/// context's save) never runs in a GTK application. libdispatch signals queued work on an
/// eventfd; a GLib source watching it drains the queue on the main thread.
///
/// A ``FetchedResultsListModel`` attaches it when made on the main thread; an application
/// that uses contexts on the main queue without a list model calls ``attach()`` once.
public enum MainQueueSource {
    nonisolated(unsafe) private static var sourceID: guint = 0

    /// Attaches the source to the default main context (once; later calls do nothing). Call
    /// on the main thread before the main loop runs.
    public static func attach() {
        guard sourceID == 0 else { return }
        let drain: GUnixFDSourceFunc = { _, _, _ in
            fr_main_queue_drain()
            return gboolean(1)  // G_SOURCE_CONTINUE
        }
        sourceID = g_unix_fd_add_full(G_PRIORITY_DEFAULT, fr_main_queue_handle(), G_IO_IN, drain, nil, nil)
        // Work queued before the handle existed woke nothing: run it at the first iteration.
        _ = MainLoop.idle(priority: G_PRIORITY_DEFAULT) { fr_main_queue_drain() }
    }
}
