import ArgumentParser
import Datasets
import FetchedResults
import Foundation
import ObjectStore

/// `dump`: the controller's sections and objects as JSON.
struct Dump: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print the dataset's sections and objects as JSON.")

    @OptionGroup var options: DatasetOptions

    func run() throws {
        let (dataset, store) = try options.open()
        let context = ObjectContext(store: store)
        let controller = try dataset.makeController(context: context)
        try controller.performFetch()
        let sections = (controller.sections ?? []).map { section -> [String: Any] in
            [
                "name": section.name,
                "title": dataset.view.sectionTitle(forSectionName: section.name),
                "objects": section.objects.map { object -> [String: Any] in
                    var values: [String: Any] = [:]
                    for attribute in object.entity.attributes {
                        values[attribute.name] = object.attributeValue(forKey: attribute.name).jsonObject
                    }
                    for relationship in object.entity.relationships where !relationship.isToMany {
                        values[relationship.name] = (object.relatedObjects(forKey: relationship.name).first as? ManagedObject)
                            .map { $0.objectID.description } ?? NSNull()
                    }
                    return ["id": object.objectID.description, "values": values]
                },
            ]
        }
        printJSON(["dataset": dataset.name, "sections": sections])
    }
}
