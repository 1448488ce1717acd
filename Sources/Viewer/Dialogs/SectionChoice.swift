import CAdw
import CGtk
import Foundation
import GtkBinding
import ObjectStore

/// The dialogs' choice of a row's section when sections come from their own entity (to-do:
/// its List): a drop-down of the section objects in the list's order, so that a row can go
/// into an empty section and move to another, and "New List…" for a section made on saving.
final class SectionChoice {
    let label: Widget
    /// The drop-down, and the entry of a new section's title below it.
    let widget: Widget
    let dropDown: Widget
    /// The label: view.json's for the row's relationship to its section.
    let title: String
    /// The section objects offered, in the drop-down's order.
    let sectionIDs: [ObjectID]
    private let choice: ChoiceOrNew

    /// A choice of `sections` (ID and header text) showing `selected`, else the first.
    init(title: String, sections: [(id: ObjectID, title: String)], selected: ObjectID?) {
        self.title = title
        sectionIDs = sections.map(\.id)
        choice = ChoiceOrNew(names: sections.map(\.title), newLabel: "New \(title)…", accessibleName: title)
        (widget, dropDown) = (choice.widget, choice.dropDown)
        label = makeLabel(title, naming: dropDown)
        gtk_widget_set_tooltip_text(dropDown, title)
        if let selected, let index = sectionIDs.firstIndex(of: selected) {
            choice.selectedIndex = index
        } else if !sectionIDs.isEmpty {
            choice.selectedIndex = 0
        }
    }

    /// The section object chosen; nil when there is none, or a new one is to be made.
    var selectedID: ObjectID? {
        choice.selectedIndex.flatMap { sectionIDs.indices.contains($0) ? sectionIDs[$0] : nil }
    }

    /// The title typed for a new section (trimmed); nil when an existing one is chosen.
    var newTitle: String? {
        choice.isNew ? choice.text.trimmingCharacters(in: .whitespacesAndNewlines) : nil
    }

    /// The existing section whose title the new one typed is but for case ("home" for
    /// "Home"); nil when the new title is new.
    var existingTitleTyped: String? { choice.existingNameTyped }

    /// The entry of a new section's title, to point at when it is refused.
    var newTitleEntry: Widget { choice.entry }
}
