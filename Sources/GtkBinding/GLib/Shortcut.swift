import CGtk

/// Keyboard shortcuts that run Swift closures.
///
/// ```swift
/// let shortcuts = gtk_shortcut_controller_new()
/// gtk_shortcut_controller_set_scope(shortcuts, GTK_SHORTCUT_SCOPE_MANAGED)
/// Shortcut.add(to: shortcuts, "<Control>n") { [weak self] in self?.addNote() }
/// gtk_widget_add_controller(window, shortcuts)
/// ```
public enum Shortcut {
    private final class Box {
        let action: () -> Bool
        init(_ action: @escaping () -> Bool) { self.action = action }
    }

    /// Adds to a `GtkShortcutController` a shortcut that runs `action` when `accelerator`
    /// (GTK's syntax: `"<Control>f"`, `"Delete"`) is pressed. The closure lives as long as the
    /// shortcut: capture Swift owners weakly.
    public static func add(to controller: OpaquePointer, _ accelerator: String, _ action: @escaping () -> Void) {
        add(to: controller, accelerator, handling: {
            action()
            return true
        })
    }

    /// A shortcut whose `action` says whether it handled the key: when it did not (Escape
    /// with nothing to end), the key goes on to other controllers and widgets.
    public static func add(to controller: OpaquePointer, _ accelerator: String, handling action: @escaping () -> Bool) {
        let callback: GtkShortcutFunc = { _, _, data in
            Unmanaged<Box>.fromOpaque(data!).takeUnretainedValue().action() ? 1 : 0
        }
        let release: GDestroyNotify = { data in Unmanaged<Box>.fromOpaque(data!).release() }
        let shortcutAction = gtk_callback_action_new(callback, Unmanaged.passRetained(Box(action)).toOpaque(), release)
        gtk_shortcut_controller_add_shortcut(controller, gtk_shortcut_new(gtk_shortcut_trigger_parse_string(accelerator), shortcutAction))
    }
}
