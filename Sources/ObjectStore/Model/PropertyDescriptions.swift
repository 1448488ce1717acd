import Foundation

/// An attribute of an entity: a named, typed value stored in one column.
public struct AttributeDescription: Sendable, Hashable {
    /// The attribute's name, unique among the entity's properties.
    public var name: String
    /// The type every value of the attribute has.
    public var type: AttributeType
    /// Whether the attribute may be nil. A required attribute must have a value at save.
    public var isOptional: Bool
    /// The value a newly inserted object starts with (``Value/null`` for none).
    public var defaultValue: Value
    /// The smallest allowed string length or binary size, checked at save.
    public var minLength: Int?
    /// The largest allowed string length or binary size, checked at save.
    public var maxLength: Int?
    /// The smallest allowed number or date, checked at save.
    public var minValue: Value?
    /// The largest allowed number or date, checked at save.
    public var maxValue: Value?
    /// How changes of the attribute made at the same time in several places combine:
    /// ``AttributeMerge/replace`` (the default) or, for a counter, ``AttributeMerge/add``.
    public var merge: AttributeMerge

    public init(
        name: String, type: AttributeType, isOptional: Bool = false, defaultValue: Value = .null,
        minLength: Int? = nil, maxLength: Int? = nil, minValue: Value? = nil, maxValue: Value? = nil,
        merge: AttributeMerge = .replace
    ) {
        self.name = name
        self.type = type
        self.isOptional = isOptional
        self.defaultValue = defaultValue
        self.minLength = minLength
        self.maxLength = maxLength
        self.minValue = minValue
        self.maxValue = maxValue
        self.merge = merge
    }

    /// Whether the attribute is a counter (``AttributeMerge/add``).
    public var isCounter: Bool { merge == .add }
}

/// How changes of one attribute made at the same time in several places (two contexts, two
/// processes, two desktops sharing a store) combine.
///
/// A counter (`wins`, a tap count) is ``add``: a context records each change of it as a
/// delta from the value it started from (`team.wins += 1` adds one, whatever the value was),
/// a save writes `wins = wins + delta`, and sharing sends the delta, so that concurrent
/// changes add up and never conflict. Everything else is ``replace``: a save compares the
/// field with the value its edit started from, and a change made elsewhere meanwhile is a
/// conflict that ``MergePolicy`` settles.
public enum AttributeMerge: String, Sendable, Hashable, Codable, CaseIterable {
    /// The value set replaces the others; a concurrent change is a conflict.
    case replace
    /// A counter (integer or double attributes only): concurrent changes add up.
    case add
}

/// What happens to related objects when an object is deleted.
public enum DeleteRule: String, Sendable, Hashable, Codable, CaseIterable {
    /// The related objects stay; their inverse relationship is cleared.
    case nullify
    /// The related objects are deleted too.
    case cascade
    /// The delete is refused at save while related objects exist.
    case deny
}

/// A to-one or to-many relationship from an entity to another (or the same) entity.
///
/// Every relationship has an inverse on the destination entity. A to-one relationship whose
/// inverse is to-many stores the destination's key in a column of its own table; a
/// one-to-one pair stores it on the side whose `Entity.name` sorts first.
public struct RelationshipDescription: Sendable, Hashable {
    public var name: String
    /// The name of the entity at the other end.
    public var destinationEntity: String
    /// The name of the relationship on the destination that points back.
    public var inverseName: String
    public var isToMany: Bool
    public var deleteRule: DeleteRule
    /// Whether a to-one relationship may be nil at save.
    public var isOptional: Bool

    public init(
        name: String, destinationEntity: String, inverseName: String, isToMany: Bool = false,
        deleteRule: DeleteRule = .nullify, isOptional: Bool = true
    ) {
        self.name = name
        self.destinationEntity = destinationEntity
        self.inverseName = inverseName
        self.isToMany = isToMany
        self.deleteRule = deleteRule
        self.isOptional = isOptional
    }
}

/// An index over one or more properties of an entity, each ascending or descending.
public struct IndexDescription: Sendable, Hashable {
    /// One indexed property and its direction.
    public struct Element: Sendable, Hashable {
        public var property: String
        public var ascending: Bool
        public init(_ property: String, ascending: Bool = true) {
            self.property = property
            self.ascending = ascending
        }
    }

    /// The index name; derived from the entity and properties when nil.
    public var name: String?
    public var elements: [Element]

    public init(name: String? = nil, _ elements: [Element]) {
        self.name = name
        self.elements = elements
    }

    /// An index over the given properties; a leading `-` makes that property descending.
    public init(name: String? = nil, properties: [String]) {
        self.name = name
        self.elements = properties.map {
            $0.hasPrefix("-") ? Element(String($0.dropFirst()), ascending: false) : Element($0)
        }
    }
}
