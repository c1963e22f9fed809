{{/* Names, labels and the pieces the bot and the worker share. */}}

{{- define "joinops.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "joinops.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Object name for one component: <fullname>-<suffix>, kept within 63 characters. */}}
{{- define "joinops.componentName" -}}
{{- $root := index . 0 -}}
{{- printf "%s-%s" (include "joinops.fullname" $root | trunc (int (sub 62 (len (index . 1))))) (index . 1) | trimSuffix "-" -}}
{{- end -}}

{{- define "joinops.selectorLabels" -}}
app.kubernetes.io/name: {{ include "joinops.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "joinops.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "joinops.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "joinops.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "joinops.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "joinops.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* Does any managed cluster use the pod's own ServiceAccount? */}}
{{- define "joinops.usesInCluster" -}}
{{- $in := false -}}
{{- range .Values.clusters -}}
{{- if .inCluster -}}{{- $in = true -}}{{- end -}}
{{- end -}}
{{- $in -}}
{{- end -}}

{{- define "joinops.configDir" -}}/etc/joinops/config{{- end -}}
{{- define "joinops.clusterDir" -}}/etc/joinops/clusters{{- end -}}

{{/* Fail early on values the schema cannot express. */}}
{{- define "joinops.validate" -}}
{{- if not (has .Values.bot.mode (list "socket" "http")) -}}
{{- fail "bot.mode must be socket or http" -}}
{{- end -}}
{{- if .Values.redis.bundled -}}
{{- if or .Values.redis.url .Values.redis.existingSecret -}}
{{- fail "redis.url and redis.existingSecret are for an external Redis: set redis.bundled=false" -}}
{{- end -}}
{{- else if not (or .Values.redis.url .Values.redis.existingSecret) -}}
{{- fail "redis.bundled is false: set redis.url or redis.existingSecret" -}}
{{- else if and .Values.redis.url .Values.redis.existingSecret -}}
{{- fail "set only one of redis.url and redis.existingSecret" -}}
{{- end -}}
{{- if and .Values.bot.ingress.enabled (ne .Values.bot.mode "http") -}}
{{- fail "bot.ingress.enabled needs bot.mode=http (Socket Mode takes no inbound traffic)" -}}
{{- end -}}
{{- if and .Values.bot.ingress.enabled (not .Values.bot.ingress.host) -}}
{{- fail "bot.ingress.host is required when bot.ingress.enabled is true" -}}
{{- end -}}
{{- $seen := dict -}}
{{- $inCluster := 0 -}}
{{- range .Values.clusters -}}
{{- if .inCluster -}}{{- $inCluster = add1 $inCluster -}}{{- end -}}
{{- if hasKey $seen .name -}}
{{- fail (printf "clusters: %s is listed twice" .name) -}}
{{- end -}}
{{- $_ := set $seen .name true -}}
{{- if and .inCluster .secretName -}}
{{- fail (printf "clusters: %s sets both inCluster and secretName" .name) -}}
{{- end -}}
{{- if not (or .inCluster .secretName) -}}
{{- fail (printf "clusters: %s needs secretName (a Secret with its kubeconfig) or inCluster: true" .name) -}}
{{- end -}}
{{- end -}}
{{- if gt $inCluster 1 -}}
{{- fail "clusters: only one entry can be inCluster" -}}
{{- end -}}
{{- end -}}

{{/* The environment common to the bot and the worker. */}}
{{- define "joinops.env" -}}
- name: SLACK_BOT_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ .Values.slack.existingSecret }}
      key: {{ .Values.slack.botTokenKey }}
- name: SLACK_API_URL
  value: {{ .Values.slack.apiUrl | quote }}
- name: REDIS_URL
{{- if .Values.redis.bundled }}
  value: {{ printf "redis://%s:6379/0" (include "joinops.componentName" (list . "redis")) | quote }}
{{- else if .Values.redis.existingSecret }}
  valueFrom:
    secretKeyRef:
      name: {{ .Values.redis.existingSecret }}
      key: {{ .Values.redis.existingSecretKey }}
{{- else }}
  value: {{ .Values.redis.url | quote }}
{{- end }}
- name: JOINOPS_CONFIG
  value: {{ include "joinops.configDir" . }}/config.yaml
- name: HOME
  value: /tmp
{{- end -}}

{{/* Volumes common to the bot and the worker: config, kubeconfigs, /tmp. */}}
{{- define "joinops.volumes" -}}
- name: config
  configMap:
    name: {{ include "joinops.fullname" . }}
- name: tmp
  emptyDir:
    sizeLimit: {{ .Values.tmpSizeLimit }}
{{- range $i, $c := .Values.clusters }}
{{- if $c.secretName }}
- name: kubeconfig-{{ $i }}
  secret:
    secretName: {{ $c.secretName }}
    defaultMode: 0440
    items:
      - key: {{ default "kubeconfig" $c.key }}
        path: kubeconfig
{{- end }}
{{- end }}
{{- if .Values.arrivals.secretName }}
- name: hosts
  secret:
    secretName: {{ .Values.arrivals.secretName }}
    defaultMode: 0440
{{- end }}
{{- end -}}

{{- define "joinops.volumeMounts" -}}
- name: config
  mountPath: {{ include "joinops.configDir" . }}
  readOnly: true
- name: tmp
  mountPath: /tmp
{{- range $i, $c := .Values.clusters }}
{{- if $c.secretName }}
- name: kubeconfig-{{ $i }}
  mountPath: {{ include "joinops.clusterDir" $ }}/{{ $c.name }}
  readOnly: true
{{- end }}
{{- end }}
{{- if .Values.arrivals.secretName }}
- name: hosts
  mountPath: {{ .Values.arrivals.directory }}
  readOnly: true
{{- end }}
{{- end -}}

{{- define "joinops.execProbe" -}}
exec:
  command: {{ toJson .Values.probes.exec }}
periodSeconds: {{ .Values.probes.periodSeconds }}
timeoutSeconds: {{ .Values.probes.timeoutSeconds }}
failureThreshold: {{ .Values.probes.failureThreshold }}
{{- end -}}

{{- define "joinops.podSpecCommon" -}}
serviceAccountName: {{ include "joinops.serviceAccountName" . }}
automountServiceAccountToken: {{ eq (include "joinops.usesInCluster" .) "true" }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- range . }}
  - name: {{ . }}
  {{- end }}
{{- end }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}
