import CAdw
import CFetchedResultsModel
import CGtk
import Datasets
import Foundation
import GtkBinding
import ObjectStore

/// The list's rows, made by GtkBinding's `ListItemFactory`: header items look like headers
/// and cannot be selected or activated; object items show the dataset's row templates, a
/// generated image when the dataset has `row.image`, a check button for its `toggle` and a
/// +1 button for its `counter`.
@MainActor final class RowFactory {
    /// The factory GTK's list view uses.
    let items: ListItemFactory<ManagedObject>
    private weak var session: DatasetSession?
    /// Called when a person clicks a row's check button, with the new state.
    var didToggle: ((ManagedObject, Bool) -> Void)?
    /// Called when a person clicks a row's +1 button.
    var didTapCounter: ((ManagedObject) -> Void)?
    /// Gives a header's menu button the menu of the section object of the section so named
    /// (the window's actions on it), when sections come from their own entity.
    var sectionMenu: ((Widget, String) -> Void)?

    private static let widgetsKey = "fetched-results-row"

    /// Shows "Nothing here yet" under the headers of empty sections, and hides it under the
    /// others; call after the list changed (a header is not bound again when its section
    /// empties or fills).
    func refreshEmptySections() {
        guard let session else { return }
        for (name, listItem) in items.boundHeaders {
            Self.widgets(of: listItem)?.headerParts?.emptyNote.isVisible = session.isSectionEmpty(named: name)
        }
    }

    /// The row widget GTK shows `id` in (the parent of our row content, which takes the
    /// focus), when it is bound now.
    func rowWidget(showing id: ObjectID) -> UnsafeMutablePointer<GtkWidget>? { items.rowWidget(showing: id) }

    /// The row widget GTK shows the header of the section `name` in, when it is bound now.
    func headerWidget(named name: String) -> UnsafeMutablePointer<GtkWidget>? { items.headerWidget(named: name) }

    init(session: DatasetSession) {
        self.session = session
        weak var factory: RowFactory?
        items = ListItemFactory(rows: session.rows,
                                setup: { factory?.setup($0) },
                                bind: { factory?.bind($0, $1) },
                                unbind: { factory?.unbind($0) })
        factory = self
    }

    /// A new reference to the factory, for a function that takes ownership.
    func factoryReference() -> OpaquePointer { items.factoryReference() }

    /// The row widgets of a list item (kept as its data, released with it).
    static func widgets(of listItem: OpaquePointer?) -> RowWidgets? {
        guard let listItem, let data = g_object_get_data(gobject(listItem), widgetsKey) else { return nil }
        return Unmanaged<RowWidgets>.fromOpaque(data).takeUnretainedValue()
    }

    private func setup(_ listItem: OpaquePointer) {
        guard let session else { return }
        let widgets = RowWidgets(view: session.view)
        let release: GDestroyNotify = { data in Unmanaged<RowWidgets>.fromOpaque(data!).release() }
        g_object_set_data_full(gobject(listItem), Self.widgetsKey, Unmanaged.passRetained(widgets).toOpaque(), release)
        gtk_list_item_set_child(listItem, widgets.root)
        if let check = widgets.check {
            Signal.connect(check.object, "toggled") { [weak self, unowned widgets] in
                guard !widgets.isBinding, let id = widgets.objectID, let object = self?.session?.object(for: id) else { return }
                self?.didToggle?(object, gtk_check_button_get_active(check.cast()) != 0)
            }
        }
        if let counter = widgets.counter {
            Signal.connect(counter.object, "clicked") { [weak self, unowned widgets] in
                guard let id = widgets.objectID, let object = self?.session?.object(for: id) else { return }
                self?.didTapCounter?(object)
            }
        }
    }

    private func bind(_ listItem: OpaquePointer, _ content: ListItemContent<ManagedObject>) {
        guard let session, let widgets = Self.widgets(of: listItem) else { return }
        widgets.isBinding = true
        defer { widgets.isBinding = false }
        let isHeader: Bool
        if case .header = content { isHeader = true } else { isHeader = false }
        // A header's parts are made below, shown, when the row first shows a header.
        widgets.headerParts?.line.isVisible = isHeader
        widgets.content.isVisible = !isHeader
        if !isHeader { widgets.headerParts?.emptyNote.isVisible = false }
        // The row widget GTK puts around our child: styled as a whole, so that a header has no hover highlight.
        gtk_widget_get_parent(widgets.root)?.setClass("section-header-row", isHeader)
        switch content {
        case .header(let name):
            widgets.objectID = nil
            widgets.rowLabel = nil
            let parts = widgets.makeHeaderParts()
            let title = session.view.sectionTitle(forSectionName: name)
            gtk_label_set_text(parts.label.opaque, title)
            parts.emptyNote.isVisible = session.isSectionEmpty(named: name)
            if let menuButton = parts.menuButton { sectionMenu?(menuButton, name) }
        case .object(let object):
            widgets.objectID = object.objectID
            show(object, in: widgets, view: session.view)
        }
    }

    private func unbind(_ listItem: OpaquePointer) {
        guard let widgets = Self.widgets(of: listItem) else { return }
        widgets.headerParts?.emptyNote.isVisible = false
        widgets.objectID = nil
        gtk_widget_get_parent(widgets.root)?.removeClass("section-header-row")
    }

    /// `text` on one line: a row's title and subtitle show one line each, so a value's line
    /// breaks (a name another program wrote) show as spaces, not as a first line alone.
    private static func oneLine(_ text: String) -> String {
        text.contains(where: \.isNewline) ? text.split(whereSeparator: \.isNewline).joined(separator: " ") : text
    }

    private func show(_ object: ManagedObject, in widgets: RowWidgets, view: ViewConfiguration) {
        let title = Self.oneLine(ViewConfiguration.render(view.row.title, for: object))
        gtk_inscription_set_text(widgets.title.opaque, title)
        let subtitle = view.row.subtitle.map { Self.oneLine(ViewConfiguration.render($0, for: object)) }
        gtk_inscription_set_text(widgets.subtitle.opaque, subtitle ?? "")
        widgets.rowLabel = [title, subtitle].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: ", ")
        if let imageKey = view.row.image, let image = widgets.image {
            // No image files ship: a placeholder of the title's initials, coloured after the image name.
            let imageName = ViewConfiguration.text(of: object, keyPath: imageKey)
            gtk_inscription_set_text(image.opaque, Placeholder.initials(of: title))
            let color = Placeholder.colorClass(for: imageName.isEmpty ? title : imageName)
            for other in Placeholder.colorClasses where other != color { image.removeClass(other) }
            image.addClass(color)
            widgets.imageTooltip = imageName.isEmpty ? nil : imageName
        }
        let isOn = view.toggle.map { object.attributeValue(forKey: $0) == .bool(true) } ?? false
        if let toggle = view.toggle, let check = widgets.check {
            gtk_check_button_set_active(check.cast(), isOn ? 1 : 0)
            widgets.checkLabel = "\(view.label(forKeyPath: toggle)): \(title)"
        }
        // A row whose toggle is on looks done, not only its ticked box.
        widgets.content.setClass("done", isOn)
        widgets.counterTooltip = view.counterAction
        widgets.counterLabel = view.counterAction.map { "\($0) to \(title)" }
    }
}

/// The picture shown where a row's image would be: initials on a colour picked from the name.
enum Placeholder {
    static let colorClasses = (1...8).map { "avatar-color-\($0)" }

    /// The first letters of the first two words: "Costa Rica" → "CR", "Brazil" → "B".
    static func initials(of text: String) -> String {
        String(text.split(separator: " ").prefix(2).compactMap(\.first)).uppercased()
    }

    /// A colour class that is the same for a name on every run (unlike Swift's seeded hash).
    static func colorClass(for name: String) -> String {
        // FNV-1a, folded so that every bit of the name reaches the low ones.
        let hash = name.utf8.reduce(UInt32(2_166_136_261)) { ($0 ^ UInt32($1)) &* 16_777_619 }
        return colorClasses[Int((hash ^ hash >> 16) % UInt32(colorClasses.count))]
    }
}
