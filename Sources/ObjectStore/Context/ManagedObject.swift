import Foundation

/// An object of the graph: one row of an entity's table, owned by one ``ObjectContext``.
open class ManagedObject {
    public required init() {}
}
