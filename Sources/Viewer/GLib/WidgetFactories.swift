import CAdw
import CGtk
import Foundation
import CViewer
import GtkBinding

/// A new label with `text` and CSS classes.
func makeLabel(_ text: String = "", classes: [String] = [], xalign: Float = 0) -> Widget {
    let label = gtk_label_new(text)!
    gtk_label_set_xalign(label.opaque, xalign)
    for name in classes { label.addClass(name) }
    return label
}

/// A new inscription: a line of text, ellipsized at its end. Its size comes from its font
/// and `min-chars`, not from its text, and is at least a line high. Setting its text redraws
/// it, and GTK measures nothing again (a label measures its new text).
func makeInscription(classes: [String] = [], xalign: Float = 0) -> Widget {
    let inscription = gtk_inscription_new(nil)!
    gtk_inscription_set_text_overflow(inscription.opaque, GTK_INSCRIPTION_OVERFLOW_ELLIPSIZE_END)
    gtk_inscription_set_xalign(inscription.opaque, xalign)
    for name in classes { inscription.addClass(name) }
    return inscription
}

/// A new box of `children`.
func makeBox(_ orientation: GtkOrientation, spacing: Int32 = 0, _ children: [Widget] = []) -> Widget {
    let box = gtk_box_new(orientation, spacing)!
    for child in children { gtk_box_append(box.cast(), child) }
    return box
}

/// A new label naming `widget` (before it in a grid): dimmed, right-aligned, and the name
/// assistive technologies read for the widget.
func makeLabel(_ text: String, naming widget: Widget) -> Widget {
    let label = makeLabel(text, classes: ["dim-label"], xalign: 1)
    fr_accessible_set_labelled_by(widget, label)
    return label
}

/// `name` in quotes, for a sentence: a long one (a 500-character team name) cut to its
/// first 40 characters and "…", so that a toast says what it is about in a line.
func quoted(_ name: String) -> String {
    "“\(name.count > 40 ? name.prefix(39) + "…" : name)”"
}

/// Makes a wrapping label break a word too long for its line (a name with no spaces), so
/// that it never asks for more width than the window has.
func wrapAnywhere(_ label: Widget) {
    gtk_label_set_wrap(label.opaque, 1)
    gtk_label_set_wrap_mode(label.opaque, PANGO_WRAP_WORD_CHAR)
}

/// The text of a label or an inscription.
func labelText(_ label: Widget) -> String {
    if label.isA(gtk_inscription_get_type()) { return gtk_inscription_get_text(label.opaque).map { String(cString: $0) } ?? "" }
    return String(cString: gtk_label_get_text(label.opaque))
}

/// A new button showing the icon `icon`, with a tooltip, named for assistive technologies
/// (an icon has no text to read) `name`, else the tooltip without its shortcut ("Undo (Ctrl+Z)": "Undo").
func makeButton(icon: String, tooltip: String, name: String? = nil) -> Widget {
    let button = gtk_button_new_from_icon_name(icon)!
    gtk_widget_set_tooltip_text(button, tooltip)
    let withoutShortcut = tooltip.range(of: " (").map { String(tooltip[..<$0.lowerBound]) } ?? tooltip
    nameIconButton(button, name ?? withoutShortcut)
    return button
}

/// Names a button that shows an icon. GTK 4.8 says the button is labelled by its image and
/// reads that by its class ("GtkImage") when it has no name, and a name of the button's own
/// before it ("Undo Undo"): the image gets the name, the button none of its own.
func nameIconButton(_ button: Widget, _ name: String) {
    guard let image = gtk_button_get_child(button.cast()) else {
        return fr_accessible_set_text(button, GTK_ACCESSIBLE_PROPERTY_LABEL, name)
    }
    fr_accessible_set_text(image, GTK_ACCESSIBLE_PROPERTY_LABEL, name)
    fr_accessible_set_text(button, GTK_ACCESSIBLE_PROPERTY_LABEL, nil)
}

/// Names the scroll bars of `scrolled` ("Scroll the list"), and the range inside each, for
/// assistive technologies: GTK 4.8 reads a nameless widget by its class ("GtkScrollbar").
func nameScrollBars(of scrolled: Widget, _ name: String) {
    for bar in [gtk_scrolled_window_get_vscrollbar(scrolled.opaque), gtk_scrolled_window_get_hscrollbar(scrolled.opaque)] {
        guard let bar else { continue }
        fr_accessible_set_text(bar, GTK_ACCESSIBLE_PROPERTY_LABEL, name)
        if let range = gtk_widget_get_first_child(bar) { fr_accessible_set_text(range, GTK_ACCESSIBLE_PROPERTY_LABEL, name) }
    }
}

/// A new button labelled `mnemonic` ("_Save": Alt+S presses it). GTK 4.8 names it for
/// assistive technologies by the text with the underscore followed by its label's ("_Save
/// Save"): named by its label alone here.
func makeButton(mnemonic: String) -> Widget {
    let button = gtk_button_new_with_mnemonic(mnemonic)!
    fr_accessible_set_text(button, GTK_ACCESSIBLE_PROPERTY_LABEL, nil)
    return button
}

/// A new drop-down offering `strings`; `name` is what assistive technologies read for it
/// (it shows only the chosen string).
func makeDropDown(_ strings: [String], name: String? = nil) -> Widget {
    let dropDown = gtk_drop_down_new(makeStringList(strings), nil)!
    fr_accessible_set_text(dropDown, GTK_ACCESSIBLE_PROPERTY_LABEL, name)
    if let name { InnerPartNames.name(dropDown: dropDown, name) }
    return dropDown
}

/// A list item factory for a drop-down of strings whose label gives way when there is no
/// room ("World C…"): a header bar's title, which would otherwise keep the window from being
/// narrower than its header's buttons and title together.
func makeShrinkingLabelFactory() -> OpaquePointer {
    let ui = """
        <interface><template class="GtkListItem"><property name="child"><object class="GtkLabel">
          <property name="xalign">0</property><property name="ellipsize">end</property>
          <binding name="label"><lookup name="string" type="GtkStringObject"><lookup name="item">GtkListItem</lookup></lookup></binding>
        </object></property></template></interface>
        """
    let bytes = ui.withCString { g_bytes_new($0, gsize(strlen($0))) }
    defer { g_bytes_unref(bytes) }
    return gtk_builder_list_item_factory_new_from_bytes(nil, bytes)
}

/// A new `GtkStringList` of `strings` (a new reference).
func makeStringList(_ strings: [String]) -> OpaquePointer {
    let list = gtk_string_list_new(nil)!
    for string in strings { gtk_string_list_append(list, string) }
    return list
}
