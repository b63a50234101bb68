import BurrowCLI

await BurrowMain.run(Array(CommandLine.arguments.dropFirst()))
