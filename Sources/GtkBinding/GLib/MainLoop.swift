import CGtk

/// Swift closures run by the GLib main loop.
///
/// ## Topics
/// - ``idle(priority:_:)``
/// - ``after(milliseconds:_:)``
public enum MainLoop {
    private final class Box {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    private static let release: GDestroyNotify = { data in Unmanaged<Box>.fromOpaque(data!).release() }

    /// Runs `body` once, on the main loop's next idle moment at `priority`. The default runs
    /// before GTK lays out and draws the next frame, so what it changes is never drawn half done.
    @discardableResult
    public static func idle(priority: Int32 = G_PRIORITY_HIGH_IDLE, _ body: @escaping () -> Void) -> guint {
        let call: GSourceFunc = { data in
            Unmanaged<Box>.fromOpaque(data!).takeUnretainedValue().body()
            return gboolean(0)  // G_SOURCE_REMOVE
        }
        return g_idle_add_full(priority, call, Unmanaged.passRetained(Box(body)).toOpaque(), release)
    }

    /// Runs `body` once after `milliseconds`.
    @discardableResult
    public static func after(milliseconds: UInt32, _ body: @escaping () -> Void) -> guint {
        let call: GSourceFunc = { data in
            Unmanaged<Box>.fromOpaque(data!).takeUnretainedValue().body()
            return gboolean(0)
        }
        return g_timeout_add_full(G_PRIORITY_DEFAULT, milliseconds, call, Unmanaged.passRetained(Box(body)).toOpaque(), release)
    }
}
