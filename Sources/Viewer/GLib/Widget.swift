import CGtk

/// A `GtkWidget *`, as GTK's constructors return it.
typealias Widget = UnsafeMutablePointer<GtkWidget>

extension UnsafeMutablePointer where Pointee == GtkWidget {
    /// The widget as a pointer to one of its public struct types (`GtkBox`, `GtkWindow`...):
    /// the GObject cast macros do not import into Swift.
    func cast<T>() -> UnsafeMutablePointer<T> { UnsafeMutableRawPointer(self).assumingMemoryBound(to: T.self) }

    /// The widget as a final type (`GtkLabel`, `GtkListView`...), which imports as OpaquePointer.
    var opaque: OpaquePointer { OpaquePointer(self) }

    /// The widget as a GObject instance, for signals and properties.
    var object: gpointer { UnsafeMutableRawPointer(self) }

    func addClass(_ name: String) { gtk_widget_add_css_class(self, name) }
    func removeClass(_ name: String) { gtk_widget_remove_css_class(self, name) }
    func setClass(_ name: String, _ on: Bool) { on ? addClass(name) : removeClass(name) }

    var isVisible: Bool {
        get { gtk_widget_get_visible(self) != 0 }
        nonmutating set { gtk_widget_set_visible(self, newValue ? 1 : 0) }
    }

    /// The widget and every widget below it, depth first.
    var descendants: [Widget] {
        var result: [Widget] = [self]
        var child = gtk_widget_get_first_child(self)
        while let current = child {
            result += current.descendants
            child = gtk_widget_get_next_sibling(current)
        }
        return result
    }

    /// Whether the widget is an instance of `type` (a `*_get_type()`).
    func isA(_ type: GType) -> Bool {
        g_type_check_instance_is_a(UnsafeMutableRawPointer(self).assumingMemoryBound(to: GTypeInstance.self), type) != 0
    }
}

/// A new label with `text` and CSS classes.
func makeLabel(_ text: String = "", classes: [String] = [], xalign: Float = 0) -> Widget {
    let label = gtk_label_new(text)!
    gtk_label_set_xalign(label.opaque, xalign)
    for name in classes { label.addClass(name) }
    return label
}

/// A new box of `children`.
func makeBox(_ orientation: GtkOrientation, spacing: Int32 = 0, _ children: [Widget] = []) -> Widget {
    let box = gtk_box_new(orientation, spacing)!
    for child in children { gtk_box_append(box.cast(), child) }
    return box
}

/// The text of a label.
func labelText(_ label: Widget) -> String {
    String(cString: gtk_label_get_text(label.opaque))
}

/// Any GObject instance as a `GObject *` (the G_OBJECT macro).
func gobject(_ instance: OpaquePointer?) -> UnsafeMutablePointer<GObject> {
    UnsafeMutableRawPointer(instance!).assumingMemoryBound(to: GObject.self)
}
