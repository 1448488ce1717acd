import CGtk
import GtkBinding

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

