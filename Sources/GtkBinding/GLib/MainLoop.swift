import CGtk
import Foundation

/// Swift closures run by the GLib main loop.
///
/// ## Topics
/// - ``idle(priority:_:)``
/// - ``after(milliseconds:_:)``
public enum MainLoop {
    /// Runs the main loop (and through it the Dispatch main queue) for `duration`: idle
    /// work, merges of other contexts' saves and, with a display, layout and drawing. For
    /// tests and benchmarks, which drive the loop themselves.
    @MainActor package static func iterate(for duration: TimeInterval = 0.3) {
        let deadline = Date().addingTimeInterval(duration)
        repeat {
            while g_main_context_iteration(nil, 0) != 0 {}
            usleep(2_000)
        } while Date() < deadline
    }

    /// Runs the main loop until `condition` holds or `timeout` passes; returns whether it held.
    @discardableResult
    @MainActor package static func iterate(until condition: () -> Bool, timeout: TimeInterval = 5) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() {
            guard Date() < deadline else { return false }
            iterate(for: 0.01)
        }
        return true
    }

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
