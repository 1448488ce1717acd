import Foundation

/// A Swift type an ``Attribute`` property can have: `String`, `Int`, `Int64`, `Double`,
/// `Bool`, `Date`, `Data`, and optionals of them.
public protocol AttributeValue {
    /// The value as the object stores it.
    var attributeValue: Value { get }
    /// The value read back; nil stored values read as the type's empty value (`0`, `""`) for
    /// non-optional types, as Core Data's scalar accessors do.
    init(attributeValue: Value)
}

extension String: AttributeValue {
    public var attributeValue: Value { .string(self) }
    public init(attributeValue: Value) { if case .string(let v) = attributeValue { self = v } else { self = "" } }
}
extension Int: AttributeValue {
    public var attributeValue: Value { .integer(Int64(self)) }
    public init(attributeValue: Value) {
        switch attributeValue.converted(to: .integer) {
        case .integer(let v)?: self = Int(truncatingIfNeeded: v)
        default: self = 0
        }
    }
}
extension Int64: AttributeValue {
    public var attributeValue: Value { .integer(self) }
    public init(attributeValue: Value) { self = Int64(Int(attributeValue: attributeValue)) }
}
extension Double: AttributeValue {
    public var attributeValue: Value { .double(self) }
    public init(attributeValue: Value) {
        switch attributeValue.converted(to: .double) {
        case .double(let v)?: self = v
        default: self = 0
        }
    }
}
extension Bool: AttributeValue {
    public var attributeValue: Value { .bool(self) }
    public init(attributeValue: Value) { if case .bool(let v) = attributeValue { self = v } else { self = false } }
}
extension Date: AttributeValue {
    public var attributeValue: Value { .date(self) }
    public init(attributeValue: Value) {
        if case .date(let v) = attributeValue { self = v } else { self = Date(timeIntervalSince1970: 0) }
    }
}
extension Data: AttributeValue {
    public var attributeValue: Value { .binary(self) }
    public init(attributeValue: Value) { if case .binary(let v) = attributeValue { self = v } else { self = Data() } }
}
extension Optional: AttributeValue where Wrapped: AttributeValue {
    public var attributeValue: Value { map(\.attributeValue) ?? .null }
    public init(attributeValue: Value) {
        self = attributeValue.isNull ? nil : Wrapped(attributeValue: attributeValue)
    }
}

/// The key a property wrapper stands for: given, or the property's own name, found once per
/// object by reflection.
public final class PropertyKey: @unchecked Sendable {
    var name: String?
    init(_ name: String?) { self.name = name }

    func resolve(in object: ManagedObject) -> String {
        if let name { return name }
        object.nameWrapperKeys()
        return name ?? ""
    }
}

protocol NamedPropertyWrapper {
    var key: PropertyKey { get }
}

extension ManagedObject {
    /// Gives every unnamed property wrapper of this object the name of its property.
    func nameWrapperKeys() {
        guard !wrappersNamed else { return }
        wrappersNamed = true
        var mirror: Mirror? = Mirror(reflecting: self)
        while let current = mirror {
            for child in current.children {
                guard let label = child.label, label.hasPrefix("_"), let wrapper = child.value as? NamedPropertyWrapper,
                      wrapper.key.name == nil else { continue }
                wrapper.key.name = String(label.dropFirst())
            }
            mirror = current.superclassMirror
        }
    }
}

/// A typed attribute of a ``ManagedObject`` subclass, read and written through the context
/// with change tracking: `@Attribute var wins: Int`, then `team.wins += 1`.
///
/// The key is the property's name; pass another (`@Attribute("zone")`) to map a property to
/// an attribute of another name. Setting a value throws nothing: a write the context refuses
/// (a deleted object) is ignored, as the key-value path would have thrown.
@propertyWrapper
public struct Attribute<T: AttributeValue>: NamedPropertyWrapper {
    let key: PropertyKey

    public init(_ key: String? = nil) { self.key = PropertyKey(key) }

    @available(*, unavailable, message: "@Attribute is only available on ManagedObject subclasses")
    public var wrappedValue: T {
        get { fatalError() }
        set { fatalError() }
    }

    public static subscript<Object: ManagedObject>(
        _enclosingInstance object: Object,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, T>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Self>
    ) -> T {
        get {
            T(attributeValue: object.attributeValue(forKey: object[keyPath: storageKeyPath].key.resolve(in: object)))
        }
        set {
            let key = object[keyPath: storageKeyPath].key.resolve(in: object)
            try? object.managedObjectContext?.setAttribute(newValue.attributeValue, of: object, key: key)
        }
    }
}

/// A typed relationship of a ``ManagedObject`` subclass: `@Relationship var details:
/// FailedBankDetails?` for to-one, `@Relationship var items: [TodoItem]` for to-many.
@propertyWrapper
public struct Relationship<T: RelationshipValue>: NamedPropertyWrapper {
    let key: PropertyKey

    public init(_ key: String? = nil) { self.key = PropertyKey(key) }

    @available(*, unavailable, message: "@Relationship is only available on ManagedObject subclasses")
    public var wrappedValue: T {
        get { fatalError() }
        set { fatalError() }
    }

    public static subscript<Object: ManagedObject>(
        _enclosingInstance object: Object,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, T>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Self>
    ) -> T {
        get {
            let key = object[keyPath: storageKeyPath].key.resolve(in: object)
            return T(relatedObjects: object.relatedObjects(forKey: key).compactMap { $0 as? ManagedObject })
        }
        set {
            let key = object[keyPath: storageKeyPath].key.resolve(in: object)
            try? object.setValue(newValue.relationshipValue, forKey: key)
        }
    }
}

/// A Swift type a ``Relationship`` property can have: an optional object (to-one) or an
/// array of objects (to-many).
public protocol RelationshipValue {
    init(relatedObjects: [ManagedObject])
    var relationshipValue: Any? { get }
}

extension Optional: RelationshipValue where Wrapped: ManagedObject {
    public init(relatedObjects: [ManagedObject]) { self = relatedObjects.first as? Wrapped }
    public var relationshipValue: Any? { self.map { $0 as Any } }
}

extension Array: RelationshipValue where Element: ManagedObject {
    public init(relatedObjects: [ManagedObject]) { self = relatedObjects.compactMap { $0 as? Element } }
    public var relationshipValue: Any? { self as [ManagedObject] }
}
