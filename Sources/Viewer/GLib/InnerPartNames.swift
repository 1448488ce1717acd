import CAdw
import CGtk
import CViewer
import GtkBinding

/// Names for the inner parts of GTK's and libadwaita's own widgets, which GTK 4.8 reads to
/// a screen reader by their class ("AdwGizmo", "GtkToggleButton") when they have no name.
enum InnerPartNames {
    /// A header bar's start and end boxes: "Start of the header bar", "End of the header bar".
    @MainActor static func name(headerBar header: Widget) {
        let boxes = header.descendants.filter { typeName(of: $0) == "AdwGizmo" }
        for (box, name) in zip(boxes, ["Start of the header bar", "End of the header bar"]) {
            fr_accessible_set_text(box, GTK_ACCESSIBLE_PROPERTY_LABEL, name)
        }
    }

    /// A drop-down's button, the pages of the stack that shows its choice, and the item
    /// shown: each by the drop-down's `name` (the chosen string stays readable in its label);
    /// its arrow hidden. Again whenever it is mapped: GTK makes some of them late.
    @MainActor static func name(dropDown: Widget, _ name: String) {
        let apply = {
            for part in dropDown.descendants {
                switch typeName(of: part) {
                case "GtkToggleButton", "GtkListItemWidget": fr_accessible_set_text(part, GTK_ACCESSIBLE_PROPERTY_LABEL, name)
                case "GtkBuiltinIcon": fr_accessible_set_hidden(part, 1)
                case "GtkStack":
                    let pages = gtk_stack_get_pages(part.opaque)!
                    defer { g_object_unref(UnsafeMutableRawPointer(pages)) }
                    for index in 0..<g_list_model_get_n_items(pages) {
                        let page = g_list_model_get_item(pages, index)
                        fr_accessible_object_set_label(page, name)
                        g_object_unref(page)
                    }
                default: continue
                }
            }
        }
        apply()
        Signal.connect(dropDown.object, "map") { apply() }
        Signal.connect(dropDown.object, "notify::selected") { (_: gpointer?) in apply() }
    }

    /// A check button's box (its state is the button's own): hidden.
    @MainActor static func hideIndicator(of check: Widget) {
        for part in check.descendants where typeName(of: part) == "GtkBuiltinIcon" { fr_accessible_set_hidden(part, 1) }
    }

    private static func typeName(of widget: Widget) -> String {
        String(cString: g_type_name_from_instance(UnsafeMutableRawPointer(widget).assumingMemoryBound(to: GTypeInstance.self)))
    }
}
