// The ember subcommands; each returns the process exit code.
#ifndef EMBER_TOOLS_CLI_COMMANDS_H_
#define EMBER_TOOLS_CLI_COMMANDS_H_

namespace ember::tools {

// argv[0] is the subcommand name; options follow.
int RunCommand(int argc, char** argv);
int ConvertCommand(int argc, char** argv);
int InspectCommand(int argc, char** argv);
int TokenizeCommand(int argc, char** argv);
int LogitsCommand(int argc, char** argv);
int EmbedCommand(int argc, char** argv);
int RerankCommand(int argc, char** argv);
int AttnCommand(int argc, char** argv);
int BenchCommand(int argc, char** argv);
int BenchCompareCommand(int argc, char** argv);
int BenchChartCommand(int argc, char** argv);
int TemplateCommand(int argc, char** argv);
int ChatCommand(int argc, char** argv);
int BakeCommand(int argc, char** argv);
int GrammarCommand(int argc, char** argv);
int ImageCommand(int argc, char** argv);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_CLI_COMMANDS_H_
