import FetchedResults
import Foundation
import ObjectStore

/// What stands at one position of a ``FetchedResultsListModel``, as of now.
public enum ListRow: Hashable, Sendable {
    /// The header of the section at `sectionIndex`.
    case header(sectionIndex: Int)
    /// The object with this ID, at this index path of the controller.
    case object(ObjectID, IndexPath)
}

/// What an item of the GListModel (an `FrRow`) stands for.
///
/// Unlike a position, this stays true for as long as GTK holds the item: GTK keeps the items
/// of rows that only shift, and asks for new items wherever the list announces a change
/// (an updated object, a renamed section, an object saved for the first time).
public enum ListItemIdentity: Hashable, Sendable {
    /// A section header, with the section's name.
    case header(sectionName: String)
    /// An object row.
    case object(ObjectID)
}
