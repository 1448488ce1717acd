import CAdw
import CGtk
import GtkBinding
import CViewer
import Datasets
import ObjectStore

/// The widgets of one list row, made once per GtkListItem and bound to one item at a time:
/// a section header, or an object's image, title, subtitle, check button and counter button.
///
/// The image's initials, the title and the subtitle are inscriptions: their size does not
/// depend on their text, so a row bound to another object is not measured again. GTK keeps
/// about 200 row widgets; when a page of a joining desktop gave most of them new contents,
/// the next frame measured every one (about 0.25 ms a row, most of it laying out the text
/// of rows never drawn). An inscription lays its text out only to draw it.
///
/// A row makes only what its dataset's view shows (an image, a check button, a counter
/// button), and its header and empty-section note the first time it shows a header: GTK
/// makes about 200 rows at once (opening, a bigger list), and most never show a header.
@MainActor final class RowWidgets {
    let root: Widget
    let content: Widget
    /// The picture of the view's `row.image`; nil when the view has none.
    let image: Widget?
    let title: Widget
    let subtitle: Widget
    /// The check button of the view's `toggle`; nil when the view has none.
    let check: Widget?
    /// The +1 button of the view's `counter`; nil when the view has none.
    let counter: Widget?
    /// A header's line (its label, and the menu of its section object: Rename, Delete),
    /// and the note under a header whose section has no objects (a to-do list with no items
    /// yet); nil until the row first shows a header.
    private(set) var headerParts: HeaderParts?
    /// Whether headers get a menu of their section object (sections from their own entity).
    private let headersHaveMenus: Bool

    struct HeaderParts {
        /// The line: the label and the menu button.
        let line: Widget
        let label: Widget
        /// The section object's menu; nil when sections are no objects (World Cup's zones).
        let menuButton: Widget?
        let emptyNote: Widget
    }
    /// The object the row shows; nil for a header.
    var objectID: ObjectID?
    /// True while bind sets the widgets, so that their signals are not taken for a person's.
    var isBinding = false
    /// The tooltips of the image and the counter button. GTK asks for them (`query-tooltip`)
    /// rather than having them set: on X11 gtk_widget_set_tooltip_text asks the server where
    /// the pointer is (two round trips), and rows are bound by the hundred while an import
    /// lands among them. They also describe the widgets to assistive technologies, as a set
    /// tooltip does.
    var imageTooltip: String? {
        didSet { if imageTooltip != oldValue, let image { fr_accessible_set_text(image, GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, imageTooltip) } }
    }
    var counterTooltip: String? {
        didSet { if counterTooltip != oldValue, let counter { fr_accessible_set_text(counter, GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, counterTooltip) } }
    }
    /// What assistive technologies read for the row, one sentence ("Ghana, Wins: 2"; nil for
    /// a header), its check button ("Done: Buy milk") and its counter button ("Add a win to
    /// Ghana"). The row's is set on GTK's row widget around ``root``, which takes the focus.
    var rowLabel: String? {
        didSet {
            guard rowLabel != oldValue, let row = gtk_widget_get_parent(root) else { return }
            fr_accessible_set_text(row, GTK_ACCESSIBLE_PROPERTY_LABEL, rowLabel)
        }
    }
    var checkLabel: String? {
        didSet { if checkLabel != oldValue, let check { fr_accessible_set_text(check, GTK_ACCESSIBLE_PROPERTY_LABEL, checkLabel) } }
    }
    var counterLabel: String? {
        didSet { if counterLabel != oldValue, let counter { fr_accessible_set_text(counter, GTK_ACCESSIBLE_PROPERTY_LABEL, counterLabel) } }
    }

    /// The widgets of a row of a list shown with `view`.
    init(view: ViewConfiguration) {
        headersHaveMenus = view.sectionRequest != nil
        if view.row.image != nil {
            let image = makeInscription(classes: ["avatar"], xalign: 0.5)
            // The initials repeat the title: read once, in the row's sentence.
            fr_accessible_set_hidden(image, 1)
            gtk_widget_set_valign(image, GTK_ALIGN_CENTER)
            self.image = image
        } else {
            image = nil
        }
        title = makeInscription(classes: ["row-title"])
        subtitle = makeInscription(classes: ["row-subtitle", "dim-label"])
        subtitle.isVisible = view.row.subtitle != nil
        let texts = makeBox(GTK_ORIENTATION_VERTICAL, spacing: 2, [title, subtitle])
        gtk_widget_set_hexpand(texts, 1)
        gtk_widget_set_valign(texts, GTK_ALIGN_CENTER)
        if view.toggle != nil {
            let check = gtk_check_button_new()!
            InnerPartNames.hideIndicator(of: check)
            gtk_widget_set_valign(check, GTK_ALIGN_CENTER)
            self.check = check
        } else {
            check = nil
        }
        if view.counter != nil {
            let counter = gtk_button_new_with_label("+1")!
            counter.addClass("flat")
            counter.addClass("counter-button")
            gtk_widget_set_valign(counter, GTK_ALIGN_CENTER)
            self.counter = counter
        } else {
            counter = nil
        }
        content = makeBox(GTK_ORIENTATION_HORIZONTAL, spacing: 12, [check, image, texts, counter].compactMap { $0 })
        content.addClass("object-row")
        root = makeBox(GTK_ORIENTATION_VERTICAL, [content])
        for (widget, tooltip) in [(image, \RowWidgets.imageTooltip), (counter, \RowWidgets.counterTooltip)] {
            guard let widget else { continue }
            gtk_widget_set_has_tooltip(widget, 1)
            Signal.connect(widget.object, "query-tooltip") { [weak self] (gtkTooltip: OpaquePointer?) -> Bool in
                guard let text = self?[keyPath: tooltip] else { return false }
                gtk_tooltip_set_text(gtkTooltip, text)
                return true
            }
        }
    }

    /// The header's line and empty-section note, made (above the content) the first time.
    func makeHeaderParts() -> HeaderParts {
        if let headerParts { return headerParts }
        let label = fr_label_new_with_role(GTK_ACCESSIBLE_ROLE_HEADING)!
        gtk_label_set_xalign(label.opaque, 0)
        gtk_label_set_ellipsize(label.opaque, PANGO_ELLIPSIZE_END)
        gtk_widget_set_hexpand(label, 1)
        label.addClass("section-header")
        var menuButton: Widget?
        if headersHaveMenus {
            let button = gtk_menu_button_new()!
            gtk_menu_button_set_icon_name(button.opaque, "view-more-symbolic")
            button.addClass("flat")
            button.addClass("section-menu")
            // Level with the label's text, which has 10 px more padding above than below.
            gtk_widget_set_valign(button, GTK_ALIGN_CENTER)
            gtk_widget_set_margin_top(button, 10)
            menuButton = button
        }
        let line = makeBox(GTK_ORIENTATION_HORIZONTAL, spacing: 6, [label, menuButton].compactMap { $0 })
        let emptyNote = makeLabel("Nothing here yet", classes: ["section-empty", "dim-label"])
        emptyNote.isVisible = false
        gtk_box_prepend(root.cast(), emptyNote)
        gtk_box_prepend(root.cast(), line)
        let parts = HeaderParts(line: line, label: label, menuButton: menuButton, emptyNote: emptyNote)
        headerParts = parts
        return parts
    }
}
