import Foundation

/// A Swift type an ``Attribute`` property can have: `String`, `Int`, `Int64`, `Double`,
/// `Bool`, `Date`, `Data`, and optionals of them.
///
/// The type also says how ``Model/init(classes:)`` describes the attribute: its
/// ``attributeType`` and, for optionals, that nil is a value (``isOptionalAttribute``).
public protocol AttributeValue {
    /// The value as the object stores it.
    var attributeValue: Value { get }
    /// The value read back; nil stored values read as the type's empty value (`0`, `""`) for
    /// non-optional types, as Core Data's scalar accessors do.
    init(attributeValue: Value)
    /// The type of the attribute values of this Swift type are stored in; `Int` says
    /// ``AttributeType/integer``. Nil (the default) for a type that does not say, which
    /// ``Model/init(classes:)`` refuses.
    static var attributeType: AttributeType? { get }
    /// Whether nil is a value of this type, making the attribute optional: true for
    /// `Optional`, false (the default) for the others.
    static var isOptionalAttribute: Bool { get }
}

extension AttributeValue {
    /// None: a type that conforms without naming its attribute type cannot describe an
    /// attribute in ``Model/init(classes:)``.
    public static var attributeType: AttributeType? { nil }
    /// False: values of this type are never nil.
    public static var isOptionalAttribute: Bool { false }
}

extension String: AttributeValue {
    public static var attributeType: AttributeType? { .string }
    public var attributeValue: Value { .string(self) }
    public init(attributeValue: Value) { if case .string(let v) = attributeValue { self = v } else { self = "" } }
}
extension Int: AttributeValue {
    public static var attributeType: AttributeType? { .integer }
    public var attributeValue: Value { .integer(Int64(self)) }
    public init(attributeValue: Value) {
        switch attributeValue.converted(to: .integer) {
        case .integer(let v)?: self = Int(truncatingIfNeeded: v)
        default: self = 0
        }
    }
}
extension Int64: AttributeValue {
    public static var attributeType: AttributeType? { .integer }
    public var attributeValue: Value { .integer(self) }
    public init(attributeValue: Value) { self = Int64(Int(attributeValue: attributeValue)) }
}
extension Double: AttributeValue {
    public static var attributeType: AttributeType? { .double }
    public var attributeValue: Value { .double(self) }
    public init(attributeValue: Value) {
        switch attributeValue.converted(to: .double) {
        case .double(let v)?: self = v
        default: self = 0
        }
    }
}
extension Bool: AttributeValue {
    public static var attributeType: AttributeType? { .bool }
    public var attributeValue: Value { .bool(self) }
    public init(attributeValue: Value) { if case .bool(let v) = attributeValue { self = v } else { self = false } }
}
extension Date: AttributeValue {
    public static var attributeType: AttributeType? { .date }
    public var attributeValue: Value { .date(self) }
    public init(attributeValue: Value) {
        if case .date(let v) = attributeValue { self = v } else { self = Date(timeIntervalSince1970: 0) }
    }
}
extension Data: AttributeValue {
    public static var attributeType: AttributeType? { .binary }
    public var attributeValue: Value { .binary(self) }
    public init(attributeValue: Value) { if case .binary(let v) = attributeValue { self = v } else { self = Data() } }
}
extension Optional: AttributeValue where Wrapped: AttributeValue {
    public static var attributeType: AttributeType? { Wrapped.attributeType }
    public static var isOptionalAttribute: Bool { true }
    public var attributeValue: Value { map(\.attributeValue) ?? .null }
    public init(attributeValue: Value) {
        self = attributeValue.isNull ? nil : Wrapped(attributeValue: attributeValue)
    }
}

/// The key a property wrapper stands for (given, or the property's own name, found once per
/// object by reflection), and what its wrapper declares about the property.
public final class PropertyKey: @unchecked Sendable {
    var name: String?
    let declaration: PropertyDeclaration

    init(_ name: String?, _ declaration: PropertyDeclaration) {
        self.name = name
        self.declaration = declaration
    }

    func resolve(in object: ManagedObject) -> String {
        if let name { return name }
        object.nameWrapperKeys()
        return name ?? ""
    }
}

/// What a property wrapper's arguments say about its property beyond its Swift type: the
/// rest of its description in a model derived from classes.
enum PropertyDeclaration {
    case attribute(defaultValue: Value, minLength: Int?, maxLength: Int?, minValue: Value?, maxValue: Value?, merge: AttributeMerge)
    case relationship(inverse: String?, deleteRule: DeleteRule, isOptional: Bool)
}

/// A property as its wrapper describes it, for ``Model/init(classes:)``.
struct DeclaredProperty {
    enum Kind {
        /// Nil when the Swift type names no attribute type.
        case attribute(AttributeDescription?)
        /// `destination` is nil when the Swift type names no destination class.
        case relationship(destination: ManagedObject.Type?, isToMany: Bool, inverse: String?, deleteRule: DeleteRule, isOptional: Bool)
    }

    /// The Swift property's name.
    let propertyName: String
    /// The attribute or relationship name in the model.
    let key: String
    /// The Swift type of the property.
    let valueType: Any.Type
    let kind: Kind

    /// The Swift type as Swift code spells it: `Folder?`, `[Note]`.
    var valueTypeName: String {
        let name = String(describing: valueType)
        guard name.hasSuffix(">") else { return name }
        if name.hasPrefix("Optional<") { return "\(name.dropFirst("Optional<".count).dropLast())?" }
        if name.hasPrefix("Array<") { return "[\(name.dropFirst("Array<".count).dropLast())]" }
        return name
    }
}

protocol NamedPropertyWrapper {
    var key: PropertyKey { get }
    /// The property as this wrapper describes it, once its key is named.
    func declaredProperty(named propertyName: String) -> DeclaredProperty
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

    /// The properties this object's wrappers declare, a superclass's before its subclass's,
    /// each class's in declaration order.
    func declaredProperties() -> [DeclaredProperty] {
        nameWrapperKeys()
        var mirrors: [Mirror] = []
        var mirror: Mirror? = Mirror(reflecting: self)
        while let current = mirror {
            mirrors.append(current)
            mirror = current.superclassMirror
        }
        return mirrors.reversed().flatMap { mirror in
            mirror.children.compactMap { child -> DeclaredProperty? in
                guard let label = child.label, label.hasPrefix("_"),
                      let wrapper = child.value as? NamedPropertyWrapper else { return nil }
                return wrapper.declaredProperty(named: String(label.dropFirst()))
            }
        }
    }
}

/// A typed attribute of a ``ManagedObject`` subclass, read and written through the context
/// with change tracking: `@Attribute var wins: Int`, then `team.wins += 1`.
///
/// The key is the property's name; pass another (`@Attribute("zone")`) to map a property to
/// an attribute of another name. Setting a value throws nothing: a write the context refuses
/// (a deleted object) is ignored, as the key-value path would have thrown.
///
/// In a model derived from classes (``Model/init(classes:)``) the wrapper describes the
/// attribute: its type comes from the Swift type (`Int` is an integer attribute, `String?`
/// an optional string one), the rest from the arguments:
///
/// ```swift
/// @Attribute(minLength: 1) var teamName: String
/// @Attribute("zone") var qualifyingZone: String
/// @Attribute var imageName: String?
/// @Attribute(default: 0, minValue: 0, merge: .add) var wins: Int   // a counter
/// ```
@propertyWrapper
public struct Attribute<T: AttributeValue>: NamedPropertyWrapper {
    let key: PropertyKey

    /// An attribute named `key` (the property's own name when nil).
    ///
    /// The other arguments describe the attribute in a model derived from classes
    /// (``Model/init(classes:)``) and are checked when a context saves; a model built from
    /// ``EntityDescription`` values or a JSON file takes them from there instead.
    ///
    /// - Parameters:
    ///   - key: The attribute's name in the model and the store, if not the property's.
    ///   - defaultValue: The value a newly inserted object starts with.
    ///   - minLength: The smallest allowed string length or binary size.
    ///   - maxLength: The largest allowed string length or binary size.
    ///   - minValue: The smallest allowed number or date.
    ///   - maxValue: The largest allowed number or date.
    ///   - merge: `.add` for a counter, whose concurrent changes add up (see ``AttributeMerge``).
    public init(
        _ key: String? = nil, default defaultValue: T? = nil,
        minLength: Int? = nil, maxLength: Int? = nil, minValue: T? = nil, maxValue: T? = nil, merge: AttributeMerge = .replace
    ) {
        self.key = PropertyKey(key, .attribute(
            defaultValue: defaultValue?.attributeValue ?? .null, minLength: minLength, maxLength: maxLength,
            minValue: minValue?.attributeValue, maxValue: maxValue?.attributeValue, merge: merge))
    }

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

    func declaredProperty(named propertyName: String) -> DeclaredProperty {
        let name = key.name ?? propertyName
        var description: AttributeDescription?
        if let type = T.attributeType, case let .attribute(defaultValue, minLength, maxLength, minValue, maxValue, merge) = key.declaration {
            description = AttributeDescription(
                name: name, type: type, isOptional: T.isOptionalAttribute, defaultValue: defaultValue,
                minLength: minLength, maxLength: maxLength, minValue: minValue, maxValue: maxValue, merge: merge)
        }
        return DeclaredProperty(propertyName: propertyName, key: name, valueType: T.self, kind: .attribute(description))
    }
}

/// A typed relationship of a ``ManagedObject`` subclass: `@Relationship var folder: Folder?`
/// for to-one, `@Relationship var notes: Set<Note>` or `[Note]` for to-many.
///
/// A to-many array is in key order: saved objects in the order of their primary keys (the
/// order they were first saved), then unsaved ones in the order they were inserted. The order
/// of an assigned array is not kept; assign a `Set` when order means nothing.
///
/// In a model derived from classes (``Model/init(classes:)``) the wrapper describes the
/// relationship: the destination class and to-many-ness come from the Swift type, the inverse
/// and delete rule from the arguments. Name the inverse on one side or both:
///
/// ```swift
/// final class Folder: ManagedObject {
///     @Relationship(inverse: "folder", deleteRule: .cascade) var notes: Set<Note>
/// }
/// final class Note: ManagedObject {
///     @Relationship var folder: Folder?   // its inverse is Folder.notes, which names it
/// }
/// ```
@propertyWrapper
public struct Relationship<T: RelationshipValue>: NamedPropertyWrapper {
    let key: PropertyKey

    /// A relationship named `key` (the property's own name when nil).
    ///
    /// The other arguments describe the relationship in a model derived from classes
    /// (``Model/init(classes:)``); a model built from ``EntityDescription`` values or a JSON
    /// file takes them from there instead.
    ///
    /// - Parameters:
    ///   - key: The relationship's name in the model and the store, if not the property's.
    ///   - inverse: The relationship property of the destination class that points back. One
    ///     side of a pair must name the other; naming it on both sides is allowed when they
    ///     agree.
    ///   - deleteRule: What deleting an object does to the objects this relationship holds.
    ///   - isOptional: Whether a to-one relationship may be nil when the object is saved.
    public init(_ key: String? = nil, inverse: String? = nil, deleteRule: DeleteRule = .nullify, isOptional: Bool = true) {
        self.key = PropertyKey(key, .relationship(inverse: inverse, deleteRule: deleteRule, isOptional: isOptional))
    }

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

    func declaredProperty(named propertyName: String) -> DeclaredProperty {
        let name = key.name ?? propertyName
        var inverse: String?, deleteRule = DeleteRule.nullify, isOptional = true
        if case let .relationship(declaredInverse, declaredRule, declaredOptional) = key.declaration {
            (inverse, deleteRule, isOptional) = (declaredInverse, declaredRule, declaredOptional)
        }
        return DeclaredProperty(
            propertyName: propertyName, key: name, valueType: T.self,
            kind: .relationship(destination: T.destinationClass, isToMany: T.isToManyRelationship, inverse: inverse,
                                deleteRule: deleteRule, isOptional: isOptional))
    }
}

/// A Swift type a ``Relationship`` property can have: an optional object (to-one), or an
/// array or a set of objects (to-many).
///
/// The type also says how ``Model/init(classes:)`` describes the relationship: the class of
/// its objects (``destinationClass``) and whether it is to-many (``isToManyRelationship``).
public protocol RelationshipValue {
    /// The value holding `relatedObjects`, the objects at the other end in key order.
    init(relatedObjects: [ManagedObject])
    /// The value as ``ManagedObject/setValue(_:forKey:)`` takes it.
    var relationshipValue: Any? { get }
    /// The class of the objects at the other end: `Note` for `Note?`, `[Note]` and
    /// `Set<Note>`. Nil (the default) for a type that does not say, which
    /// ``Model/init(classes:)`` refuses.
    static var destinationClass: ManagedObject.Type? { get }
    /// Whether values of this type hold many objects (false by default).
    static var isToManyRelationship: Bool { get }
}

extension RelationshipValue {
    /// None: a type that conforms without naming its destination class cannot describe a
    /// relationship in ``Model/init(classes:)``.
    public static var destinationClass: ManagedObject.Type? { nil }
    /// False: a value holds one object at most.
    public static var isToManyRelationship: Bool { false }
}

extension Optional: RelationshipValue where Wrapped: ManagedObject {
    public static var destinationClass: ManagedObject.Type? { Wrapped.self }
    public init(relatedObjects: [ManagedObject]) { self = relatedObjects.first as? Wrapped }
    public var relationshipValue: Any? { self.map { $0 as Any } }
}

extension Array: RelationshipValue where Element: ManagedObject {
    public static var destinationClass: ManagedObject.Type? { Element.self }
    public static var isToManyRelationship: Bool { true }
    public init(relatedObjects: [ManagedObject]) { self = relatedObjects.compactMap { $0 as? Element } }
    public var relationshipValue: Any? { self as [ManagedObject] }
}

extension Set: RelationshipValue where Element: ManagedObject {
    public static var destinationClass: ManagedObject.Type? { Element.self }
    public static var isToManyRelationship: Bool { true }
    public init(relatedObjects: [ManagedObject]) { self = Set(relatedObjects.compactMap { $0 as? Element }) }
    public var relationshipValue: Any? { self as Set<ManagedObject> }
}
