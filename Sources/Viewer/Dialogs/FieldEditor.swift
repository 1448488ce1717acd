import CGtk
import Datasets
import Foundation
import ObjectStore

/// One field of a dialog: a label and the widget that fits its attribute (`view.json`'s
/// `addFields`/`editFields`): an entry, a spin button, a switch, or a date entry.
final class FieldEditor {
    let field: ViewConfiguration.Field
    let attribute: AttributeDescription
    let label: Widget
    let widget: Widget
    let kind: ViewConfiguration.Widget
    /// The label: the field's, else the attribute's name for people.
    let title: String

    init(field: ViewConfiguration.Field, attribute: AttributeDescription) {
        self.field = field
        self.attribute = attribute
        kind = field.widget ?? Self.defaultKind(for: attribute.type)
        title = field.label ?? DetailPane.label(forKey: field.key)
        label = makeLabel(title, classes: ["dim-label"], xalign: 1)
        switch kind {
        case .entry, .date:
            widget = gtk_entry_new()
            gtk_entry_set_activates_default(widget.cast(), 1)
            if kind == .date { gtk_entry_set_placeholder_text(widget.cast(), "YYYY-MM-DD") }
            gtk_widget_set_hexpand(widget, 1)
        case .spin:
            let low = field.min ?? Self.number(attribute.minValue) ?? 0
            let high = field.max ?? Self.number(attribute.maxValue) ?? 1_000_000
            widget = gtk_spin_button_new_with_range(low, high, 1)
            gtk_spin_button_set_digits(widget.opaque, attribute.type == .double ? 2 : 0)
            gtk_widget_set_halign(widget, GTK_ALIGN_START)
        case .switch:
            widget = gtk_switch_new()
            gtk_widget_set_halign(widget, GTK_ALIGN_START)
        }
        gtk_widget_set_tooltip_text(widget, title)
    }

    /// Shows the value `object` has.
    func show(_ object: ManagedObject) {
        let value = object.attributeValue(forKey: field.key)
        switch kind {
        case .entry, .date:
            gtk_editable_set_text(OpaquePointer(widget), ViewConfiguration.text(of: object, keyPath: field.key))
        case .spin:
            gtk_spin_button_set_value(widget.opaque, Self.number(value) ?? gtk_spin_button_get_value(widget.opaque))
        case .switch:
            gtk_switch_set_active(widget.opaque, value == .bool(true) ? 1 : 0)
        }
    }

    /// The value the person entered, as the attribute takes it; throws a message for people
    /// when the text cannot be one.
    func value() throws -> Any? {
        switch kind {
        case .entry:
            let text = String(cString: gtk_editable_get_text(OpaquePointer(widget)))
            // Empty text is nil for an optional attribute; a required one gets "" and the model's checks.
            return text.isEmpty && attribute.isOptional ? nil : text
        case .date:
            let text = String(cString: gtk_editable_get_text(OpaquePointer(widget))).trimmingCharacters(in: .whitespaces)
            if text.isEmpty { return nil }
            guard let date = Self.dayFormatter.date(from: text) else {
                throw FieldError(message: "\(title): write the date as YYYY-MM-DD, such as 2014-06-12")
            }
            return date
        case .spin:
            gtk_spin_button_update(widget.opaque)
            let number = gtk_spin_button_get_value(widget.opaque)
            return attribute.type == .integer ? Int(number.rounded()) : number
        case .switch:
            return gtk_switch_get_active(widget.opaque) != 0
        }
    }

    struct FieldError: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    private static func defaultKind(for type: AttributeType) -> ViewConfiguration.Widget {
        switch type {
        case .integer, .double: .spin
        case .bool: .switch
        case .date: .date
        default: .entry
        }
    }

    private static func number(_ value: Value?) -> Double? {
        switch value {
        case .integer(let v)?: Double(v)
        case .double(let v)?: v
        default: nil
        }
    }

    nonisolated(unsafe) private static let dayFormatter: ISO8601DateFormatter = {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        return formatter
    }()
}
