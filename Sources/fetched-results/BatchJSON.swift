import FetchedResults
import Foundation
import ObjectStore

/// The JSON of change batches that `apply` and `watch` print, one line a batch:
/// `{"changes":[...],"sections":[{"name":N,"count":C},...]}`.
enum BatchJSON {
    /// One batch and the sections it leads to.
    static func line(_ batch: ChangeBatch, sections: [SectionSnapshot]) -> [String: Any] {
        ["changes": changes(batch), "sections": Self.sections(sections)]
    }

    /// The sections' names and counts.
    static func sections(_ sections: [SectionSnapshot]) -> [[String: Any]] {
        sections.map { ["name": $0.name, "count": $0.objectIDs.count] }
    }

    /// The changes of a batch in delivery order; objects saved for the first time last, as
    /// `{"kind":"object","type":"rename","id":TEMPORARY,"newID":PERMANENT}`.
    static func changes(_ batch: ChangeBatch) -> [[String: Any]] {
        let sections = batch.sectionChanges.map { change -> [String: Any] in
            var json: [String: Any] = ["kind": "section", "type": change.type.rawValue, "index": change.index, "name": change.name]
            if let newIndex = change.newIndex { json["newIndex"] = newIndex }
            return json
        }
        let objects = batch.objectChanges.map { change -> [String: Any] in
            var json: [String: Any] = ["kind": "object", "type": change.type.rawValue,
                                       "id": change.objectID.description]
            if let from = change.indexPath { json["from"] = [from.section, from.item] }
            if let to = change.newIndexPath { json["to"] = [to.section, to.item] }
            return json
        }
        let renames = batch.renamedObjectIDs.sorted { $0.key.description < $1.key.description }.map { temporary, permanent -> [String: Any] in
            ["kind": "object", "type": "rename", "id": temporary.description, "newID": permanent.description]
        }
        return sections + objects + renames
    }
}
