import CAdw
import CGtk
import CViewer
import Datasets
import Foundation
import GtkBinding
import ObjectStore

/// The actions on section objects (to-do: lists), where sections come from their own entity.
struct SectionActions {
    /// `win.new-section`: New List….
    let new: OpaquePointer
    /// `win.rename-section(x)` and `win.delete-section(x)`: the section object whose row key
    /// is the parameter (a header's menu: by key, not title, as two lists of other desktops
    /// may have one title).
    let rename: OpaquePointer
    let delete: OpaquePointer
    /// `win.rename-selected-section` and `win.delete-selected-section`: the selected row's
    /// section object (the primary menu), usable while a row is selected.
    let renameSelected: OpaquePointer
    let deleteSelected: OpaquePointer
}

/// Lists you can manage (to-do): New List… in the primary menu; Rename… and Delete in each
/// header's menu (an empty list's too), and in the primary menu for the selected item's
/// list. A list deleted takes its items with it; Undo brings them all back.
extension ViewerWindow {
    func addSectionActions() -> SectionActions {
        let map: UnsafeMutableRawPointer = actionMap
        let keyed = { (parameter: OpaquePointer?) -> Int64? in parameter.map { Int64(g_variant_get_int64($0)) } }
        return SectionActions(
            new: Action.add(to: map, "new-section") { [weak self] _ in self?.showSectionTitleDialog(renaming: nil) },
            rename: Action.add(to: map, "rename-section", parameterType: "x") { [weak self] parameter in
                keyed(parameter).flatMap { self?.session?.sectionObject(rowKey: $0) }.map { self?.showSectionTitleDialog(renaming: $0) }
            },
            delete: Action.add(to: map, "delete-section", parameterType: "x") { [weak self] parameter in
                keyed(parameter).flatMap { self?.session?.sectionObject(rowKey: $0) }.map { self?.deleteSection($0) }
            },
            renameSelected: Action.add(to: map, "rename-selected-section") { [weak self] _ in
                self?.selectedSection.map { self?.showSectionTitleDialog(renaming: $0) }
            },
            deleteSelected: Action.add(to: map, "delete-selected-section") { [weak self] _ in
                self?.selectedSection.map { self?.deleteSection($0) }
            })
    }

    /// The selected row's section object (to-do: the selected item's list).
    var selectedSection: ManagedObject? {
        session.flatMap { session in session.selection.selectedObject.flatMap(session.section(of:)) }
    }

    /// The section entity in words ("List"), where sections come from their own entity.
    var sectionWord: String? { session?.view.sectionRequest.map { ViewConfiguration.words($0.entity) } }

    /// Opens New List… (`section` nil) or Rename List… on `section`; what it saves is an
    /// edit Undo reverts.
    func showSectionTitleDialog(renaming section: ManagedObject?) {
        guard let session, let request = session.view.sectionRequest, let word = sectionWord, !refusesEdits() else { return }
        let current = section.map { ViewConfiguration.text(of: $0, keyPath: request.titleKey) }
        let maxLength = session.context.model.entity(named: request.entity)?.attribute(named: request.titleKey)?.maxLength
        let others = session.sectionObjects.map(\.title).filter { $0 != current }
        let dialog = SectionTitleDialog(parent: window, word: word, current: current, others: others, maxLength: maxLength)
        dialog.didChoose = { [weak self] title in
            self?.later(followsSelection: false) { session in
                if let section { try session.renameSection(section, to: title) } else { try session.addSection(titled: title) }
            }
        }
        sectionTitleDialog = dialog
        dialog.present()
    }

    /// Deletes `section` with its rows, saying so in a toast with Undo (one toast: not one
    /// for the selected row that went with it).
    func deleteSection(_ section: ManagedObject) {
        guard let session, let request = session.view.sectionRequest, let word = sectionWord else { return }
        let title = ViewConfiguration.text(of: section, keyPath: request.titleKey)
        rowsDeletedTogether = Set(section.relatedObjects(forKey: request.itemsKey).compactMap { ($0 as? ManagedObject)?.objectID })
        perform { session in
            let count = try session.deleteSection(section)
            let rows = count == 0 ? "" : " with its \(count) \(session.rowNoun(count))"
            showToast("\(word) “\(title)” deleted\(rows)", undo: true)
        }
        MainLoop.idle { [weak self] in self?.rowsDeletedTogether = [] }
    }

    /// Gives a header's menu button the menu of the section object `id`, titled `title`.
    func setSectionMenu(of button: Widget, id: ObjectID, title: String) {
        let word = sectionWord ?? "Section"
        let menu = g_menu_new()!
        for (label, action) in [("_Rename \(word)…", "win.rename-section"), ("_Delete \(word)", "win.delete-section")] {
            let item = g_menu_item_new(label, nil)!
            g_menu_item_set_action_and_target_value(item, action, g_variant_new_int64(gint64(id.rowKey)))
            g_menu_append_item(menu, item)
            g_object_unref(UnsafeMutableRawPointer(item))
        }
        gtk_menu_button_set_menu_model(button.opaque, UnsafeMutableRawPointer(menu).assumingMemoryBound(to: GMenuModel.self))
        g_object_unref(UnsafeMutableRawPointer(menu))
        gtk_widget_set_tooltip_text(button, "\(word) Menu")
        fr_accessible_set_text(button, GTK_ACCESSIBLE_PROPERTY_LABEL, "\(word) menu: \(title)")
    }
}
