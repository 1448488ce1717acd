import CGtk

/// Connects Swift closures to GObject signals.
///
/// `g_signal_connect` is a macro, so this uses `g_signal_connect_data` with one C handler per
/// signal signature. The closure is retained as the handler's data and released by GLib when
/// the handler is disconnected or the instance finalized: capture Swift owners weakly, or the
/// instance keeps them alive.
public enum Signal {
    private final class Box<Handler> {
        let handler: Handler
        init(_ handler: Handler) { self.handler = handler }
    }

    private static func connect<Handler>(_ instance: gpointer, _ name: String, _ handler: Handler, _ thunk: GCallback,
                                         after: Bool) -> gulong {
        let release: GClosureNotify = { data, _ in Unmanaged<AnyObject>.fromOpaque(data!).release() }
        return g_signal_connect_data(instance, name, thunk, Unmanaged.passRetained(Box(handler)).toOpaque(), release,
                                     after ? G_CONNECT_AFTER : GConnectFlags(rawValue: 0))
    }

    private static func handler<Handler>(_ data: gpointer?) -> Handler {
        Unmanaged<Box<Handler>>.fromOpaque(data!).takeUnretainedValue().handler
    }

    /// A signal with no arguments: `clicked`, `toggled`, `search-changed`, `destroy`...
    @discardableResult
    public static func connect(_ instance: gpointer, _ name: String, after: Bool = false, _ handler: @escaping () -> Void) -> gulong {
        let thunk: @convention(c) (gpointer?, gpointer?) -> Void = { _, data in
            (Signal.handler(data) as () -> Void)()
        }
        return connect(instance, name, handler, unsafeBitCast(thunk, to: GCallback.self), after: after)
    }

    /// A signal with one `guint` argument: GtkListView's `activate`.
    @discardableResult
    public static func connect(_ instance: gpointer, _ name: String, _ handler: @escaping (guint) -> Void) -> gulong {
        let thunk: @convention(c) (gpointer?, guint, gpointer?) -> Void = { _, value, data in
            (Signal.handler(data) as (guint) -> Void)(value)
        }
        return connect(instance, name, handler, unsafeBitCast(thunk, to: GCallback.self), after: false)
    }

    /// A signal with two `guint` arguments: GtkSelectionModel's `selection-changed`.
    @discardableResult
    public static func connect(_ instance: gpointer, _ name: String, _ handler: @escaping (guint, guint) -> Void) -> gulong {
        let thunk: @convention(c) (gpointer?, guint, guint, gpointer?) -> Void = { _, first, second, data in
            (Signal.handler(data) as (guint, guint) -> Void)(first, second)
        }
        return connect(instance, name, handler, unsafeBitCast(thunk, to: GCallback.self), after: false)
    }

    /// A signal with three `guint` arguments: GListModel's `items-changed`.
    @discardableResult
    public static func connect(_ instance: gpointer, _ name: String, _ handler: @escaping (guint, guint, guint) -> Void) -> gulong {
        let thunk: @convention(c) (gpointer?, guint, guint, guint, gpointer?) -> Void = { _, first, second, third, data in
            (Signal.handler(data) as (guint, guint, guint) -> Void)(first, second, third)
        }
        return connect(instance, name, handler, unsafeBitCast(thunk, to: GCallback.self), after: false)
    }

    /// A signal with one pointer argument: a list item factory's `setup`, `bind`, `unbind`;
    /// `notify::property` (the GParamSpec).
    @discardableResult
    public static func connect(_ instance: gpointer, _ name: String, _ handler: @escaping (gpointer?) -> Void) -> gulong {
        let thunk: @convention(c) (gpointer?, gpointer?, gpointer?) -> Void = { _, argument, data in
            (Signal.handler(data) as (gpointer?) -> Void)(argument)
        }
        return connect(instance, name, handler, unsafeBitCast(thunk, to: GCallback.self), after: false)
    }

    /// GtkEventControllerKey's `key-pressed`: the key value, the hardware keycode and the
    /// modifiers; returns whether the key was handled (which stops it).
    @discardableResult
    public static func connect(_ instance: gpointer, _ name: String, _ handler: @escaping (guint, guint, GdkModifierType) -> Bool) -> gulong {
        let thunk: @convention(c) (gpointer?, guint, guint, GdkModifierType, gpointer?) -> gboolean = { _, keyval, keycode, state, data in
            (Signal.handler(data) as (guint, guint, GdkModifierType) -> Bool)(keyval, keycode, state) ? 1 : 0
        }
        return connect(instance, name, handler, unsafeBitCast(thunk, to: GCallback.self), after: false)
    }

    /// GtkWidget's `query-tooltip`: the `GtkTooltip *` to fill; returns whether to show it.
    @discardableResult
    public static func connect(_ instance: gpointer, _ name: String, _ handler: @escaping (OpaquePointer?) -> Bool) -> gulong {
        let thunk: @convention(c) (gpointer?, gint, gint, gboolean, OpaquePointer?, gpointer?) -> gboolean = { _, _, _, _, tooltip, data in
            (Signal.handler(data) as (OpaquePointer?) -> Bool)(tooltip) ? 1 : 0
        }
        return connect(instance, name, handler, unsafeBitCast(thunk, to: GCallback.self), after: false)
    }

    /// A signal with no arguments that returns a boolean: GtkWindow's `close-request`.
    @discardableResult
    public static func connect(_ instance: gpointer, _ name: String, _ handler: @escaping () -> Bool) -> gulong {
        let thunk: @convention(c) (gpointer?, gpointer?) -> gboolean = { _, data in
            (Signal.handler(data) as () -> Bool)() ? 1 : 0
        }
        return connect(instance, name, handler, unsafeBitCast(thunk, to: GCallback.self), after: false)
    }
}
