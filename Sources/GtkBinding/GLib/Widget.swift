import CGtk

/// A `GtkWidget *`, as GTK's constructors return it, with what the GObject cast macros
/// (which do not import into Swift) would give.
public typealias Widget = UnsafeMutablePointer<GtkWidget>

extension UnsafeMutablePointer where Pointee == GtkWidget {
    /// The widget as a pointer to one of its public struct types (`GtkBox`, `GtkWindow`...):
    /// the GObject cast macros do not import into Swift.
    public func cast<T>() -> UnsafeMutablePointer<T> { UnsafeMutableRawPointer(self).assumingMemoryBound(to: T.self) }

    /// The widget as a final type (`GtkLabel`, `GtkListView`...), which imports as OpaquePointer.
    public var opaque: OpaquePointer { OpaquePointer(self) }

    /// The widget as a GObject instance, for signals and properties.
    public var object: gpointer { UnsafeMutableRawPointer(self) }

    public func addClass(_ name: String) { gtk_widget_add_css_class(self, name) }
    public func removeClass(_ name: String) { gtk_widget_remove_css_class(self, name) }
    public func setClass(_ name: String, _ on: Bool) { on ? addClass(name) : removeClass(name) }

    public var isVisible: Bool {
        get { gtk_widget_get_visible(self) != 0 }
        nonmutating set { gtk_widget_set_visible(self, newValue ? 1 : 0) }
    }

    /// The widget and every widget below it, depth first.
    public var descendants: [Widget] {
        var result: [Widget] = [self]
        var child = gtk_widget_get_first_child(self)
        while let current = child {
            result += current.descendants
            child = gtk_widget_get_next_sibling(current)
        }
        return result
    }

    /// Whether the widget is an instance of `type` (a `*_get_type()`).
    public func isA(_ type: GType) -> Bool {
        g_type_check_instance_is_a(UnsafeMutableRawPointer(self).assumingMemoryBound(to: GTypeInstance.self), type) != 0
    }
}

/// Any GObject instance as a `GObject *` (the G_OBJECT macro).
public func gobject(_ instance: OpaquePointer?) -> UnsafeMutablePointer<GObject> {
    UnsafeMutableRawPointer(instance!).assumingMemoryBound(to: GObject.self)
}
