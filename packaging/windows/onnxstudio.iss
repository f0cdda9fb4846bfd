; Inno Setup 6 script: installs the PyInstaller one-folder build (dist\onnxstudio) and
; registers .onnx files WITHOUT taking them from another viewer:
;  - a ProgID "onnxstudio.onnx" (icon, name, open command),
;  - .onnx\OpenWithProgids, so onnxstudio appears in "Open with" next to other viewers,
;  - the .onnx default is changed only if the user ticks the (unticked) task, and even
;    then Windows 10/11 keeps a UserChoice the user made; Windows asks the user itself.
; Build: pyinstaller packaging\pyinstaller\onnxstudio.spec, then
;        iscc packaging\windows\onnxstudio.iss

#define AppName "onnxstudio"
#define AppVersion "0.1.0"
#define AppExe "onnxstudio.exe"
#define ProgId "onnxstudio.onnx"
#define SourceRoot "..\.."

[Setup]
AppId={{5B1F4A7E-3C2D-4E8B-9A61-0D2C7F4E9B13}
AppName={#AppName}
AppVersion={#AppVersion}
AppPublisher=onnxstudio developers
AppPublisherURL=https://github.com/onnxstudio/onnxstudio
DefaultDirName={autopf}\{#AppName}
DefaultGroupName={#AppName}
DisableProgramGroupPage=yes
; Per-user install by default (no UAC prompt); HKA below follows the choice.
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
ChangesAssociations=yes
LicenseFile={#SourceRoot}\LICENSE
SetupIconFile={#SourceRoot}\resources\icons\onnxstudio.ico
UninstallDisplayIcon={app}\{#AppExe}
OutputDir={#SourceRoot}\dist
OutputBaseFilename=onnxstudio-{#AppVersion}-setup
Compression=lzma2
SolidCompression=yes
WizardStyle=modern

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked
Name: "makedefault"; Description: "Open .onnx files with onnxstudio by default (otherwise it is only added to ""Open with"")"; GroupDescription: "File types:"; Flags: unchecked

[Files]
Source: "{#SourceRoot}\dist\onnxstudio\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{autoprograms}\{#AppName}"; Filename: "{app}\{#AppExe}"
Name: "{autodesktop}\{#AppName}"; Filename: "{app}\{#AppExe}"; Tasks: desktopicon

[Registry]
; The ProgID: what "onnxstudio" means as a handler.
Root: HKA; Subkey: "Software\Classes\{#ProgId}"; ValueType: string; ValueName: ""; ValueData: "ONNX Model"; Flags: uninsdeletekey
Root: HKA; Subkey: "Software\Classes\{#ProgId}\DefaultIcon"; ValueType: string; ValueName: ""; ValueData: """{app}\{#AppExe}"",0"
Root: HKA; Subkey: "Software\Classes\{#ProgId}\shell\open\command"; ValueType: string; ValueName: ""; ValueData: """{app}\{#AppExe}"" ""%1"""
; Offer it for .onnx without touching the extension's default value.
Root: HKA; Subkey: "Software\Classes\.onnx\OpenWithProgids"; ValueType: string; ValueName: "{#ProgId}"; ValueData: ""; Flags: uninsdeletevalue
Root: HKA; Subkey: "Software\Classes\.onnx"; ValueType: string; ValueName: "Content Type"; ValueData: "application/x-onnx"; Flags: createvalueifdoesntexist
Root: HKA; Subkey: "Software\Classes\.onnx"; ValueType: string; ValueName: "PerceivedType"; ValueData: "application"; Flags: createvalueifdoesntexist
; "Open with" metadata for the executable itself.
Root: HKA; Subkey: "Software\Classes\Applications\{#AppExe}"; ValueType: string; ValueName: "FriendlyAppName"; ValueData: "{#AppName}"; Flags: uninsdeletekey
Root: HKA; Subkey: "Software\Classes\Applications\{#AppExe}\SupportedTypes"; ValueType: string; ValueName: ".onnx"; ValueData: ""
Root: HKA; Subkey: "Software\Classes\Applications\{#AppExe}\shell\open\command"; ValueType: string; ValueName: ""; ValueData: """{app}\{#AppExe}"" ""%1"""
; Only when the user asked for it: become the default (removed again on uninstall
; only if it still names us, see [Code]).
Root: HKA; Subkey: "Software\Classes\.onnx"; ValueType: string; ValueName: ""; ValueData: "{#ProgId}"; Tasks: makedefault

[Run]
Filename: "{app}\{#AppExe}"; Description: "{cm:LaunchProgram,{#AppName}}"; Flags: nowait postinstall skipifsilent

[Code]
// Remove the .onnx default on uninstall only if it is still ours: another viewer that
// took it over since keeps it.
procedure CurUninstallStepChanged(CurUninstallStep: TUninstallStep);
var
  Value: String;
  Root: Integer;
begin
  if CurUninstallStep = usPostUninstall then
  begin
    if IsAdminInstallMode then Root := HKLM else Root := HKCU;
    if RegQueryStringValue(Root, 'Software\Classes\.onnx', '', Value) and
       (Value = '{#ProgId}') then
      RegDeleteValue(Root, 'Software\Classes\.onnx', '');
  end;
end;
