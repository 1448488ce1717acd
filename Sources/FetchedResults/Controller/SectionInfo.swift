import Foundation
import ObjectStore

/// One section of a controller's results.
public struct SectionInfo<Result: ManagedObject> {
    let controller: FetchedResultsController<Result>
    let index: Int
    /// The section as it was when a change was reported (a deleted one); nil: as it is now.
    let frozen: FetchedResultsController<Result>.Section?

    init(controller: FetchedResultsController<Result>, index: Int, frozen: FetchedResultsController<Result>.Section? = nil) {
        self.controller = controller
        self.index = index
        self.frozen = frozen
    }

    private var section: FetchedResultsController<Result>.Section { frozen ?? controller.layout[index] }

    /// The section's name: the section key path's value as text ("" without sections), or
    /// the section object's name.
    public var name: String { section.name }
    /// The title for a section index (the delegate's, or the name's first letter).
    public var indexTitle: String? { controller.sectionIndexTitle(forSectionName: name) }
    public var numberOfObjects: Int { section.keys.count }
    /// The section's objects, in order (faults load in batches as they are read).
    public var objects: [Result] {
        guard frozen == nil else {
            return section.keys.compactMap { try? controller.managedObjectContext.object(with: ObjectID(entityName: controller.entityName, rowKey: $0)) as? Result }
        }
        return (0..<numberOfObjects).map { controller.object(at: IndexPath(item: $0, section: index)) }
    }
    /// The ID of the section's own object, for a controller with a section fetch request.
    public var sectionObjectID: ObjectID? {
        section.sectionObjectKey.flatMap { key in
            controller.sectionEntityName.map { ObjectID(entityName: $0, rowKey: key) }
        }
    }

    /// The section's own object, for a controller with a section fetch request.
    public var sectionObject: ManagedObject? {
        section.sectionObjectKey.flatMap { key in
            controller.sectionEntityName.flatMap { try? controller.managedObjectContext.object(with: ObjectID(entityName: $0, rowKey: key)) }
        }
    }
}
