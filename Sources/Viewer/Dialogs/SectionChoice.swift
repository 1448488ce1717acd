import CAdw
import CGtk
import GtkBinding
import ObjectStore

/// The dialogs' choice of a row's section when sections come from their own entity (to-do:
/// its List): a drop-down of the section objects in the list's order, so that a row can go
/// into an empty section and move to another.
final class SectionChoice {
    let label: Widget
    let widget: Widget
    /// The label: view.json's for the row's relationship to its section.
    let title: String
    /// The section objects offered, in the drop-down's order.
    let sectionIDs: [ObjectID]

    /// A choice of `sections` (ID and header text) showing `selected`, else the first.
    init(title: String, sections: [(id: ObjectID, title: String)], selected: ObjectID?) {
        self.title = title
        sectionIDs = sections.map(\.id)
        widget = makeDropDown(sections.map(\.title))
        label = makeLabel(title, naming: widget)
        InnerPartNames.name(dropDown: widget, title)
        gtk_widget_set_halign(widget, GTK_ALIGN_START)
        gtk_widget_set_tooltip_text(widget, title)
        if let selected, let index = sectionIDs.firstIndex(of: selected) {
            gtk_drop_down_set_selected(widget.opaque, guint(index))
        }
    }

    /// The section object chosen; nil when there is none.
    var selectedID: ObjectID? {
        let index = Int(gtk_drop_down_get_selected(widget.opaque))
        return sectionIDs.indices.contains(index) ? sectionIDs[index] : nil
    }

}
