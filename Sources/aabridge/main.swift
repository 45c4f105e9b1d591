// aabridge: the executable. Subcommands: run | validate | simulate | healthcheck | keys import-bluez | report-sources | version.
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
let status = await Command.main(arguments: arguments)
exit(status)
