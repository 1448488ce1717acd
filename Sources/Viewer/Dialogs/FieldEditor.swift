import CAdw
import CGtk
import GtkBinding
import Datasets
import Foundation
import ObjectStore

/// One field of a dialog: a label and the widget that fits its attribute (`view.json`'s
/// `addFields`/`editFields`): an entry for text or a number, a switch, or a date picker (a
/// button showing the date whose popover holds a calendar, and Clear for an optional date).
///
/// A field shows a value exactly as stored and knows whether the person changed it
/// (``isChanged``), so that Edit writes only what was touched. A number is typed as text, not
/// in a spin button: a spin button clamps to its range when it loses the focus, and would show
/// (and save) a stored 5,000 as its maximum; here a value out of range is refused, with words.
final class FieldEditor {
    /// A value the person typed that the field cannot take: `message` says why, in words
    /// that start with the field's label.
    struct InvalidValue: Error, CustomStringConvertible {
        let editor: FieldEditor
        let message: String
        var description: String { message }
    }

    /// What the widget shows, to tell a change from the value shown.
    private enum State: Equatable {
        case text(String), date(Date?), on(Bool)
    }

    let field: ViewConfiguration.Field
    let attribute: AttributeDescription
    let label: Widget
    let widget: Widget
    let kind: ViewConfiguration.Widget
    /// The label: view.json's for the field's key.
    let title: String
    /// A date field's calendar (in the button's popover), the label on the button, and the
    /// popover's Clear button (shown for an optional attribute).
    private(set) var calendar: Widget?
    private(set) var dateLabel: Widget?
    private(set) var clearButton: Widget?
    /// A date field's value: a day, as the store keeps it (midnight UTC); nil when not set.
    private(set) var date: Date?
    /// True while the editor sets the calendar, so that its signal is not taken for a person's.
    private var isSettingCalendar = false
    /// What ``show(_:)`` last showed (nil before: an Add dialog's fields are all new).
    private var shownState: State?

    /// For a text field whose values are the list's sections: the choice of one of them, or
    /// a new one (see ``ChoiceOrNew``).
    private(set) var choice: ChoiceOrNew?

    /// The field `field` of `attribute`, labelled `title`; a text field whose values are the
    /// list's sections offers `sectionNames` and a new one.
    init(field: ViewConfiguration.Field, attribute: AttributeDescription, title: String, sectionNames: [String]? = nil) {
        self.field = field
        self.attribute = attribute
        self.title = title
        kind = field.widget ?? Self.defaultKind(for: attribute.type)
        switch kind {
        case .entry where sectionNames != nil:
            let choice = ChoiceOrNew(names: sectionNames ?? [], newLabel: "New \(title)…", accessibleName: title)
            self.choice = choice
            widget = choice.widget
        case .entry:
            widget = gtk_entry_new()
            gtk_entry_set_activates_default(widget.cast(), 1)
            gtk_widget_set_hexpand(widget, 1)
        case .date:
            widget = gtk_menu_button_new()
            gtk_widget_set_halign(widget, GTK_ALIGN_START)
        case .number:
            widget = gtk_entry_new()
            gtk_entry_set_activates_default(widget.cast(), 1)
            gtk_entry_set_input_purpose(widget.cast(), GTK_INPUT_PURPOSE_NUMBER)
            gtk_editable_set_width_chars(OpaquePointer(widget), 12)
            gtk_widget_set_halign(widget, GTK_ALIGN_START)
        case .switch:
            widget = gtk_switch_new()
            gtk_widget_set_halign(widget, GTK_ALIGN_START)
        }
        label = makeLabel(title, naming: choice?.dropDown ?? widget)
        gtk_widget_set_tooltip_text(choice?.dropDown ?? widget, title)
        if kind == .date { makeDatePicker() }
        if kind == .entry || kind == .number {
            Signal.connect((choice?.entry ?? widget).object, "changed") { [weak self] in self?.setError(false) }
        }
    }

    /// The date button's content (an icon and the date) and its popover: the calendar, and
    /// a Clear button when the attribute is optional.
    private func makeDatePicker() {
        let icon = gtk_image_new_from_icon_name("x-office-calendar-symbolic")!
        let label = makeLabel()
        gtk_menu_button_set_child(widget.opaque, makeBox(GTK_ORIENTATION_HORIZONTAL, spacing: 8, [icon, label]))
        let calendar = gtk_calendar_new()!
        var children = [calendar]
        if attribute.isOptional {
            let clear = makeButton(mnemonic: "C_lear")
            gtk_widget_set_tooltip_text(clear, "No \(title.lowercased())")
            gtk_widget_set_halign(clear, GTK_ALIGN_END)
            Signal.connect(clear.object, "clicked") { [weak self] in
                guard let self else { return }
                self.setDate(nil)
                gtk_menu_button_popdown(self.widget.opaque)
            }
            clearButton = clear
            children.append(clear)
        }
        let popover = gtk_popover_new()!
        gtk_popover_set_child(popover.cast(), makeBox(GTK_ORIENTATION_VERTICAL, spacing: 6, children))
        gtk_menu_button_set_popover(widget.opaque, popover)
        Signal.connect(calendar.object, "day-selected") { [weak self] in
            guard let self, !self.isSettingCalendar, let calendar = self.calendar else { return }
            let day = gtk_calendar_get_date(calendar.opaque)!
            defer { g_date_time_unref(day) }
            let components = DateComponents(year: Int(g_date_time_get_year(day)), month: Int(g_date_time_get_month(day)),
                                            day: Int(g_date_time_get_day_of_month(day)))
            self.setDate(Self.utcCalendar.date(from: components), showInCalendar: false)
        }
        self.calendar = calendar
        dateLabel = label
        setDate(nil)
    }

    /// Sets a date field's value and shows it on the button (and in the calendar, unless it came from there).
    func setDate(_ newDate: Date?, showInCalendar: Bool = true) {
        date = newDate
        guard let dateLabel else { return }
        gtk_label_set_text(dateLabel.opaque, newDate.map { Date.dayString($0) } ?? "Not set")
        dateLabel.setClass("dim-label", newDate == nil)
        clearButton.map { gtk_widget_set_sensitive($0, newDate == nil ? 0 : 1) }
        guard showInCalendar, let newDate, let calendar else { return }
        let day = Self.utcCalendar.dateComponents([.year, .month, .day], from: newDate)
        // Noon, so that no time zone moves the calendar's day.
        guard let shown = g_date_time_new_local(Int32(day.year!), Int32(day.month!), Int32(day.day!), 12, 0, 0) else { return }
        isSettingCalendar = true
        gtk_calendar_select_day(calendar.opaque, shown)
        isSettingCalendar = false
        g_date_time_unref(shown)
    }

    /// Shows the value `object` has, exactly as stored, and remembers it as the one shown.
    func show(_ object: ManagedObject) {
        let value = object.attributeValue(forKey: field.key)
        switch kind {
        case .entry:
            text = ViewConfiguration.text(of: object, keyPath: field.key)
        case .date:
            if case .date(let day) = value { setDate(day) } else { setDate(nil) }
        case .number:
            switch value {
            case .integer(let number): text = String(number)
            case .double(let number): text = "\(number)"
            default: text = ""
            }
        case .switch:
            gtk_switch_set_active(widget.opaque, value == .bool(true) ? 1 : 0)
        }
        shownState = state
    }

    /// Whether the widget shows something else than ``show(_:)`` showed (always, in an Add dialog).
    var isChanged: Bool { state != shownState }

    private var state: State {
        switch kind {
        case .entry, .number: .text(text)
        case .date: .date(date)
        case .switch: .on(gtk_switch_get_active(widget.opaque) != 0)
        }
    }

    /// An entry's text, as shown.
    var text: String {
        get { choice?.text ?? String(cString: gtk_editable_get_text(OpaquePointer(widget))) }
        set {
            if let choice { choice.text = newValue } else { gtk_editable_set_text(OpaquePointer(widget), newValue) }
        }
    }

    /// The value the person entered, as the attribute takes it; throws ``InvalidValue`` for
    /// a number that is not one, or is outside the field's `min`…`max`.
    func value() throws -> Any? {
        switch kind {
        case .entry:
            if let existing = choice?.existingNameTyped {
                throw InvalidValue(editor: self, message: "\(title) “\(existing)” is there already: choose it in the list instead of typing a new one.")
            }
            // Empty text is nil for an optional attribute (a required one is refused before, see `isMissing`).
            let text = trimmedText
            return text.isEmpty && attribute.isOptional ? nil : text
        case .date:
            // Not set is nil: a required attribute gets the model's "must not be empty".
            return date
        case .number:
            return try number()
        case .switch:
            return gtk_switch_get_active(widget.opaque) != 0
        }
    }

    /// The number typed, checked against the field's `min`…`max` (the save checks the model's
    /// `minValue`/`maxValue`). Its messages read as the model's: "Wins must be … (is …)."
    private func number() throws -> Any? {
        let text = trimmedText
        if text.isEmpty { return nil }
        func refuse(_ rule: String) -> InvalidValue { InvalidValue(editor: self, message: "\(title) must be \(rule) (is \(text)).") }
        let value: Any, number: Double
        if attribute.type == .integer {
            guard let integer = Int64(text) else {
                // Past Int64 ("99999999999999999999"): said as a range; anything else ("5.0",
                // "1e3", "lots") is not a whole number as typed.
                guard let huge = Double(text), huge.isFinite, abs(huge) >= 0x1p63, text.allSatisfy({ $0.isNumber || $0 == "-" || $0 == "+" }) else {
                    throw refuse("a whole number")
                }
                throw refuse(huge > 0 ? "at most \(Int64.max)" : "at least \(Int64.min)")
            }
            (value, number) = (Int(integer), Double(integer))
        } else {
            guard let double = Double(text), double.isFinite else { throw refuse("a number") }
            (value, number) = (double, double)
        }
        func shown(_ bound: Double) -> String { attribute.type == .integer ? String(Int64(bound)) : "\(bound)" }
        switch (field.min, field.max) {
        case let (min?, max?) where number < min || number > max: throw refuse("from \(shown(min)) to \(shown(max))")
        case let (min?, nil) where number < min: throw refuse("at least \(shown(min))")
        case let (nil, max?) where number > max: throw refuse("at most \(shown(max))")
        default: return value
        }
    }

    /// An entry's text without the spaces around it: spaces alone are no name.
    private var trimmedText: String {
        text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// True for an entry or number of a required attribute that is empty once trimmed (a
    /// number with a default starts with it in an Add dialog, see ``showDefault()``).
    var isMissing: Bool {
        (kind == .entry || kind == .number) && !attribute.isOptional && trimmedText.isEmpty
    }

    /// Shows the model's default, for an Add dialog.
    func showDefault() {
        guard kind == .number else { return }
        switch attribute.defaultValue {
        case .integer(let number): text = String(number)
        case .double(let number): text = "\(number)"
        default: break
        }
    }

    /// Shows the field as the one to correct (GTK's `error` style) or as fine.
    func setError(_ isError: Bool) {
        widget.setClass("error", isError)
    }

    private static func defaultKind(for type: AttributeType) -> ViewConfiguration.Widget {
        switch type {
        case .integer, .double: .number
        case .bool: .switch
        case .date: .date
        default: .entry
        }
    }

    nonisolated(unsafe) private static let utcCalendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()

}
