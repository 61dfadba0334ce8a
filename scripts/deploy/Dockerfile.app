# Dockerfile.app - the guard as a layer of the application's own image: the
# files only; LD_PRELOAD and the limits come from the pod's environment
# (k8s-image-layer.yaml) or `docker run -e` (docker-run.sh), so that the
# image also runs unguarded.
#   docker build -f scripts/deploy/Dockerfile.app \
#       --build-arg APP_IMAGE=vllm/vllm-openai:v0.6.3 -t registry.example.com/llm-server:guarded .
ARG GPUMEMGUARD_IMAGE=registry.example.com/gpumemguard:0.3.0
ARG APP_IMAGE=vllm/vllm-openai:v0.6.3
FROM ${GPUMEMGUARD_IMAGE} AS gpumemguard
FROM ${APP_IMAGE}
COPY --from=gpumemguard /opt/gpumemguard /opt/gpumemguard
