// swift-tools-version:6.1
// A small Notes app built on FetchedResults' library products only, as another project would.
import PackageDescription

let package = Package(
    name: "Notes",
    dependencies: [.package(name: "FetchedResults", path: "../..")],
    targets: [
        .executableTarget(
            name: "notes",
            dependencies: [
                .product(name: "ObjectStore", package: "FetchedResults"),
                .product(name: "FetchedResults", package: "FetchedResults"),
                .product(name: "GtkBinding", package: "FetchedResults"),
            ]
        ),
    ]
)
