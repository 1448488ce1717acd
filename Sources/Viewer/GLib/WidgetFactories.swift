import CAdw
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


/// A new button showing the icon `icon`, with a tooltip.
func makeButton(icon: String, tooltip: String) -> Widget {
    let button = gtk_button_new_from_icon_name(icon)!
    gtk_widget_set_tooltip_text(button, tooltip)
    return button
}

/// A new drop-down offering `strings`.
func makeDropDown(_ strings: [String]) -> Widget {
    gtk_drop_down_new(makeStringList(strings), nil)
}

/// A new `GtkStringList` of `strings` (a new reference).
func makeStringList(_ strings: [String]) -> OpaquePointer {
    let list = gtk_string_list_new(nil)!
    for string in strings { gtk_string_list_append(list, string) }
    return list
}
