// aabridge: the executable. Subcommands: run | validate | simulate | healthcheck | keys import-bluez|fetch-airpods|import-macos | report-sources | addon-config | version.
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

let arguments = Array(CommandLine.arguments.dropFirst())
let status = await Command.main(arguments: arguments)
exit(status)
